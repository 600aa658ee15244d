# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse14 and 0 more of its form
def viewfuse14(t1644, t1501):
  # t1644: "cpu bf16[8192, 1]"
  # t1501: "cpu b8[8192, 1]"
  t1505 = prims.convert_element_type(t1644, dtypes.float32)
  t1506 = prims.sum(t1505, (0, 1, ))
  t1507 = prims.convert_element_type(t1506, dtypes.bfloat16)
  t1508 = prims.convert_element_type(t1501, dtypes.int64)
  t1509 = prims.sum(t1508, (0, 1, ))
  t1510 = prims.reshape(t1509, ())
  t1511 = prims.convert_element_type(t1507, dtypes.float32)
  t1512 = prims.convert_element_type(t1510, dtypes.float32)
  t1513 = prims.div(t1511, t1512)
  t1514 = prims.convert_element_type(t1513, dtypes.bfloat16)
  return (t1510, t1514, )
