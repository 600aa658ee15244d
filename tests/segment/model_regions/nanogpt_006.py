# nanogpt step (2026-12-05, NVIDIA H100 80GB HBM3), region viewfuse62 and the regions of its form: 1 kernel(s)
# layout t7953: sizes [8192, 1] strides [1, 1] offset 0
# layout t7341: sizes [8192, 1] strides [1, 1] offset 0
def t7341(t7953, t7341):
  # t7953: "cpu bf16[8192, 1]"
  # t7341: "cpu b8[8192, 1]"
  t7345 = prims.convert_element_type(t7953, dtypes.float32)
  t7346 = prims.sum(t7345, (0, 1, ))
  t7347 = prims.convert_element_type(t7346, dtypes.bfloat16)
  t7348 = prims.convert_element_type(t7341, dtypes.int64)
  t7349 = prims.sum(t7348, (0, 1, ))
  t7350 = prims.reshape(t7349, ())
  t7351 = prims.convert_element_type(t7347, dtypes.float32)
  t7352 = prims.convert_element_type(t7350, dtypes.float32)
  t7353 = prims.div(t7351, t7352)
  t7354 = prims.convert_element_type(t7353, dtypes.bfloat16)
  return (t7350, t7354, )
