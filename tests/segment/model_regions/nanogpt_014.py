# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse70 and the regions of its form: 2 kernel(s)
# layout t7947: sizes [8192, 768] strides [768, 1] offset 0
# layout t6951: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
def t6951(t7947, t6951):
  # t7947: "cpu bf16[8192, 768]"
  # t6951: "cpu bf16[8, 1024, 768]"
  t6936 = prims.reshape(t7947, (8, 1024, 768, ))
  t6931 = prims.reshape(t6936, (8, 1024, 12, 64, ))
  t6926 = prims.transpose(t6931, (0, 2, 1, 3, ))
  t6941 = prims.convert_element_type(t6951, dtypes.float32)
  t6942 = prims.sum(t6941, (0, 1, ))
  t6943 = prims.convert_element_type(t6942, dtypes.bfloat16)
  return (t6943, t6926, )
