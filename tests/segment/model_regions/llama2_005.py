# llama2 step (2026-12-05, NVIDIA H100 80GB HBM3), region viewfuse6 and the regions of its form: 1 kernel(s)
# layout t6713: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t2151: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t_model_layers_1_attention_norm_weight: sizes [2048] strides [1] offset 0
def t_model_layers_1_attention_norm_weight(t6713, t2151, t_model_layers_1_attention_norm_weight):
  # t6713: "cpu bf16[4, 2048, 2048]"
  # t2151: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_1_attention_norm_weight: "cpu bf16[2048]"
  t2304 = prims.reshape(t6713, (4, 2048, 2048, ))
  t2306 = prims.convert_element_type(t2151, dtypes.float32)
  t2309 = prims.convert_element_type(t2304, dtypes.float32)
  t2312 = prims.add(t2306, t2309)
  t2314 = prims.convert_element_type(t2312, dtypes.bfloat16)
  t2317 = prims.convert_element_type(t2314, dtypes.float32)
  t2320 = prims.pow(t2317, 2.0)
  t2328 = prims.reshape(t2320, (4, 2048, 2048, ))
  t2330 = prims.sum(t2328, (2, ))
  t2334 = prims.broadcast_in_dim(t2330, [4, 2048, 1], [0, 1])
  t2339 = prims.div(t2334, 2048.0)
  t2346 = prims.reshape(t2339, (4, 2048, 1, ))
  t2348 = prims.add(t2346, 1e-05)
  t2350 = prims.rsqrt(t2348)
  t2355 = prims.broadcast_in_dim(t2350, (4, 2048, 2048, ), (0, 1, 2, ))
  t2361 = prims.mul(t2317, t2355)
  t2365 = prims.convert_element_type(t2361, dtypes.bfloat16)
  t2368 = prims.broadcast_in_dim(t_model_layers_1_attention_norm_weight, (4, 2048, 2048, ), (2, ))
  t2373 = prims.convert_element_type(t2365, dtypes.float32)
  t2376 = prims.convert_element_type(t2368, dtypes.float32)
  t2379 = prims.mul(t2373, t2376)
  t2383 = prims.convert_element_type(t2379, dtypes.bfloat16)
  return (t2314, t2350, t2383, )
