# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse15 and 0 more of its form
def viewfuse15(t1478, t1645, t1517):
  # t1478: "cpu bf16[8192, 50304]"
  # t1645: "cpu bf16[8192, 50304]"
  # t1517: "cpu bf16[8, 1024, 50304]"
  t1480 = prims.convert_element_type(t1478, dtypes.float32)
  t1481 = prims.exp(t1480)
  t1482 = prims.convert_element_type(t1481, dtypes.bfloat16)
  t1483 = prims.convert_element_type(t1645, dtypes.float32)
  t1484 = prims.sum(t1483, (1, ))
  t1485 = prims.broadcast_in_dim(t1484, [8192, 1], [0])
  t1486 = prims.convert_element_type(t1485, dtypes.bfloat16)
  t1487 = prims.broadcast_in_dim(t1486, (8192, 50304, ), (0, 1, ))
  t1488 = prims.convert_element_type(t1482, dtypes.float32)
  t1489 = prims.convert_element_type(t1487, dtypes.float32)
  t1490 = prims.mul(t1488, t1489)
  t1491 = prims.convert_element_type(t1490, dtypes.bfloat16)
  t1492 = prims.convert_element_type(t1645, dtypes.float32)
  t1493 = prims.convert_element_type(t1491, dtypes.float32)
  t1494 = prims.sub(t1492, t1493)
  t1495 = prims.convert_element_type(t1494, dtypes.bfloat16)
  t1496 = prims.reshape(t1495, (8192, 50304, ))
  t1458 = prims.reshape(t1496, (8, 1024, 50304, ))
  t1518 = prims.convert_element_type(t1517, dtypes.float32)
  t1519 = prims.convert_element_type(t1458, dtypes.float32)
  t1520 = prims.add(t1518, t1519)
  t1521 = prims.convert_element_type(t1520, dtypes.bfloat16)
  t1449 = prims.reshape(t1521, (8192, 50304, ))
  return (t1521, t1449, )
