# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse0 and the regions of its form: 1 kernel(s)
# layout idx: sizes [8, 1024] strides [1024, 1] offset 0
# layout t_model_transformer_wte_weight: sizes [50304, 768] strides [768, 1] offset 0
# layout t_model_transformer_wpe_weight: sizes [1024, 768] strides [768, 1] offset 0
# layout t_model_transformer_h_0_ln_1_weight: sizes [768] strides [1] offset 0
# layout t_model_transformer_h_0_ln_1_bias: sizes [768] strides [1] offset 0
def t_model_transformer_h_0_ln_1_bias(idx, t_model_transformer_wte_weight, t_model_transformer_wpe_weight, t_model_transformer_h_0_ln_1_weight, t_model_transformer_h_0_ln_1_bias):
  # idx: "cpu i64[8, 1024]"
  # t_model_transformer_wte_weight: "cpu bf16[50304, 768]"
  # t_model_transformer_wpe_weight: "cpu bf16[1024, 768]"
  # t_model_transformer_h_0_ln_1_weight: "cpu bf16[768]"
  # t_model_transformer_h_0_ln_1_bias: "cpu bf16[768]"
  pos = prims.iota(1024, start=0, step=1, dtype=dtypes.int64)
  t2232 = prims.reshape(idx, (8192, ))
  t2233 = prims.take(t_model_transformer_wte_weight, t2232, 0)
  t2234 = prims.reshape(t2233, (8, 1024, 768, ))
  t2237 = prims.take(t_model_transformer_wpe_weight, pos, 0)
  t2240 = prims.broadcast_in_dim(t2237, (8, 1024, 768, ), (1, 2, ))
  t2245 = prims.convert_element_type(t2234, dtypes.float32)
  t2248 = prims.convert_element_type(t2240, dtypes.float32)
  t2251 = prims.add(t2245, t2248)
  t2253 = prims.convert_element_type(t2251, dtypes.bfloat16)
  t2256 = prims.reshape(t2253, (8, 1024, 768, ))
  t2258 = prims.convert_element_type(t2256, dtypes.float32)
  t2261 = prims.reshape(t2258, (8, 1024, 768, ))
  (t2265, t2266) = prims.var_mean(t2261, (2, ), correction=0)
  t2281 = prims.broadcast_in_dim(t2265, [8, 1024, 1], [0, 1])
  t2286 = prims.broadcast_in_dim(t2266, [8, 1024, 1], [0, 1])
  t2291 = prims.reshape(t2281, (8, 1024, 1, ))
  t2293 = prims.reshape(t2286, (8, 1024, 1, ))
  t2295 = prims.add(t2291, 1e-05)
  t2297 = prims.rsqrt(t2295)
  t2302 = prims.broadcast_in_dim(t2293, (8, 1024, 768, ), (0, 1, 2, ))
  t2308 = prims.convert_element_type(t2256, dtypes.float32)
  t2311 = prims.sub(t2308, t2302)
  t2314 = prims.broadcast_in_dim(t2297, (8, 1024, 768, ), (0, 1, 2, ))
  t2320 = prims.mul(t2311, t2314)
  t2324 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_1_weight, (8, 1024, 768, ), (2, ))
  t2329 = prims.convert_element_type(t2324, dtypes.float32)
  t2332 = prims.mul(t2320, t2329)
  t2336 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_1_bias, (8, 1024, 768, ), (2, ))
  t2341 = prims.convert_element_type(t2336, dtypes.float32)
  t2344 = prims.add(t2332, t2341)
  t2346 = prims.convert_element_type(t2344, dtypes.bfloat16)
  return (t2256, t2266, t2297, t2346, )
