# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse0 and 0 more of its form
def viewfuse0(t1864, t_model_freqs_cos, t_model_freqs_sin, t_model_layers_0_attention_norm_weight):
  # t1864: "cpu bf16[4, 2048, 2048]"
  # t_model_freqs_cos: "cpu bf16[2048, 64]"
  # t_model_freqs_sin: "cpu bf16[2048, 64]"
  # t_model_layers_0_attention_norm_weight: "cpu bf16[2048]"
  t518 = prims.reshape(t1864, (4, 2048, 2048, ))
  t520 = prims.reshape(t_model_freqs_cos, (2048, 64, ))
  t522 = prims.reshape(t_model_freqs_sin, (2048, 64, ))
  t524 = prims.convert_element_type(t518, dtypes.float32)
  t527 = prims.pow(t524, 2.0)
  t535 = prims.reshape(t527, (4, 2048, 2048, ))
  t537 = prims.sum(t535, (2, ))
  t541 = prims.broadcast_in_dim(t537, [4, 2048, 1], [0, 1])
  t546 = prims.div(t541, 2048.0)
  t553 = prims.reshape(t546, (4, 2048, 1, ))
  t555 = prims.add(t553, 1e-05)
  t557 = prims.rsqrt(t555)
  t562 = prims.broadcast_in_dim(t557, (4, 2048, 2048, ), (0, 1, 2, ))
  t568 = prims.mul(t524, t562)
  t572 = prims.convert_element_type(t568, dtypes.bfloat16)
  t575 = prims.broadcast_in_dim(t_model_layers_0_attention_norm_weight, (4, 2048, 2048, ), (2, ))
  t580 = prims.convert_element_type(t572, dtypes.float32)
  t583 = prims.convert_element_type(t575, dtypes.float32)
  t586 = prims.mul(t580, t583)
  t590 = prims.convert_element_type(t586, dtypes.bfloat16)
  return (t520, t522, t557, t590, )
