# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse16 and 0 more of its form
def viewfuse16(t1882, t1675):
  # t1882: "cpu bf16[8192, 1]"
  # t1675: "cpu b8[8192, 1]"
  t1679 = prims.convert_element_type(t1882, dtypes.float32)
  t1680 = prims.sum(t1679, (0, 1, ))
  t1681 = prims.convert_element_type(t1680, dtypes.bfloat16)
  t1682 = prims.convert_element_type(t1675, dtypes.int64)
  t1683 = prims.sum(t1682, (0, 1, ))
  t1684 = prims.reshape(t1683, ())
  t1685 = prims.convert_element_type(t1681, dtypes.float32)
  t1686 = prims.convert_element_type(t1684, dtypes.float32)
  t1687 = prims.div(t1685, t1686)
  t1688 = prims.convert_element_type(t1687, dtypes.bfloat16)
  return (t1684, t1688, )
