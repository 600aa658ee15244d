# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse21 and 1 more of its form
def viewfuse21(t1878, t1534, t1879):
  # t1878: "cpu bf16[4, 2048, 5632]"
  # t1534: "cpu bf16[4, 2048, 5632]"
  # t1879: "cpu bf16[4, 2048, 5632]"
  t1467 = prims.convert_element_type(t1878, dtypes.float32)
  t1468 = prims.neg(t1467)
  t1469 = prims.exp(t1468)
  t1470 = prims.add(1.0, t1469)
  t1471 = prims.reciprocal(t1470)
  t1472 = prims.convert_element_type(t1471, dtypes.bfloat16)
  t1473 = prims.convert_element_type(t1878, dtypes.float32)
  t1474 = prims.convert_element_type(t1472, dtypes.float32)
  t1475 = prims.mul(t1473, t1474)
  t1476 = prims.convert_element_type(t1475, dtypes.bfloat16)
  t1529 = prims.convert_element_type(t1534, dtypes.float32)
  t1517 = prims.convert_element_type(t1476, dtypes.float32)
  t1526 = prims.mul(t1517, t1529)
  t1520 = prims.convert_element_type(t1879, dtypes.float32)
  t1522 = prims.convert_element_type(t1526, dtypes.bfloat16)
  t1525 = prims.mul(t1520, t1529)
  t1510 = prims.reshape(t1522, (8192, 5632, ))
  t1519 = prims.convert_element_type(t1525, dtypes.bfloat16)
  return (t1522, t1510, t1519, )
