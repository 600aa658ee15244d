# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse5 and the regions of its form: 1 kernel(s)
# layout t6702: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
# layout t6703: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
def t6703(t6702, t6703):
  # t6702: "cpu bf16[4, 2048, 5632]"
  # t6703: "cpu bf16[4, 2048, 5632]"
  t2232 = prims.convert_element_type(t6702, dtypes.float32)
  t2233 = prims.neg(t2232)
  t2234 = prims.exp(t2233)
  t2235 = prims.add(1.0, t2234)
  t2236 = prims.reciprocal(t2235)
  t2237 = prims.convert_element_type(t2236, dtypes.bfloat16)
  t2238 = prims.convert_element_type(t6702, dtypes.float32)
  t2239 = prims.convert_element_type(t2237, dtypes.float32)
  t2240 = prims.mul(t2238, t2239)
  t2241 = prims.convert_element_type(t2240, dtypes.bfloat16)
  t2285 = prims.convert_element_type(t6703, dtypes.float32)
  t2282 = prims.convert_element_type(t2241, dtypes.float32)
  t2288 = prims.mul(t2282, t2285)
  t2292 = prims.convert_element_type(t2288, dtypes.bfloat16)
  return (t2292, )
