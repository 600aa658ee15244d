# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse3 and the regions of its form: 1 kernel(s)
# layout t7893: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
# layout t2256: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
# layout t_model_transformer_h_0_ln_2_weight: sizes [768] strides [1] offset 0
# layout t_model_transformer_h_0_ln_2_bias: sizes [768] strides [1] offset 0
def t_model_transformer_h_0_ln_2_bias(t7893, t2256, t_model_transformer_h_0_ln_2_weight, t_model_transformer_h_0_ln_2_bias):
  # t7893: "cpu bf16[8, 1024, 768]"
  # t2256: "cpu bf16[8, 1024, 768]"
  # t_model_transformer_h_0_ln_2_weight: "cpu bf16[768]"
  # t_model_transformer_h_0_ln_2_bias: "cpu bf16[768]"
  t2423 = prims.reshape(t7893, (8, 1024, 768, ))
  t2425 = prims.convert_element_type(t2256, dtypes.float32)
  t2428 = prims.convert_element_type(t2423, dtypes.float32)
  t2431 = prims.add(t2425, t2428)
  t2433 = prims.convert_element_type(t2431, dtypes.bfloat16)
  t2436 = prims.convert_element_type(t2433, dtypes.float32)
  t2439 = prims.reshape(t2436, (8, 1024, 768, ))
  (t2443, t2444) = prims.var_mean(t2439, (2, ), correction=0)
  t2459 = prims.broadcast_in_dim(t2443, [8, 1024, 1], [0, 1])
  t2464 = prims.broadcast_in_dim(t2444, [8, 1024, 1], [0, 1])
  t2469 = prims.reshape(t2459, (8, 1024, 1, ))
  t2471 = prims.reshape(t2464, (8, 1024, 1, ))
  t2473 = prims.add(t2469, 1e-05)
  t2475 = prims.rsqrt(t2473)
  t2480 = prims.broadcast_in_dim(t2471, (8, 1024, 768, ), (0, 1, 2, ))
  t2486 = prims.convert_element_type(t2433, dtypes.float32)
  t2489 = prims.sub(t2486, t2480)
  t2492 = prims.broadcast_in_dim(t2475, (8, 1024, 768, ), (0, 1, 2, ))
  t2498 = prims.mul(t2489, t2492)
  t2502 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_2_weight, (8, 1024, 768, ), (2, ))
  t2507 = prims.convert_element_type(t2502, dtypes.float32)
  t2510 = prims.mul(t2498, t2507)
  t2514 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_2_bias, (8, 1024, 768, ), (2, ))
  t2519 = prims.convert_element_type(t2514, dtypes.float32)
  t2522 = prims.add(t2510, t2519)
  t2524 = prims.convert_element_type(t2522, dtypes.bfloat16)
  return (t2433, t2444, t2475, t2524, )
