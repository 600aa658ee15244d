# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse32 and 1 more of its form
def viewfuse32(t1894, t1136, t1120):
  # t1894: "cpu bf16[8192, 2048]"
  # t1136: "cpu bf16[4, 2048, 2048]"
  # t1120: "cpu bf16[4, 2048, 2048]"
  t1129 = prims.reshape(t1894, (4, 2048, 2048, ))
  t1109 = prims.reshape(t1136, (8192, 2048, ))
  t1736 = prims.convert_element_type(t1129, dtypes.float32)
  t1737 = prims.convert_element_type(t1120, dtypes.float32)
  t1738 = prims.add(t1736, t1737)
  t1739 = prims.convert_element_type(t1738, dtypes.bfloat16)
  return (t1109, t1739, )
