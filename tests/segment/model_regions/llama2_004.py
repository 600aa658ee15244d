# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse4 and 0 more of its form
def viewfuse4(t1869, t1864, t_model_layers_0_ffn_norm_weight):
  # t1869: "cpu bf16[4, 2048, 2048]"
  # t1864: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_0_ffn_norm_weight: "cpu bf16[2048]"
  t862 = prims.reshape(t1869, (4, 2048, 2048, ))
  t518 = prims.reshape(t1864, (4, 2048, 2048, ))
  t867 = prims.convert_element_type(t862, dtypes.float32)
  t864 = prims.convert_element_type(t518, dtypes.float32)
  t870 = prims.add(t864, t867)
  t872 = prims.convert_element_type(t870, dtypes.bfloat16)
  t875 = prims.convert_element_type(t872, dtypes.float32)
  t878 = prims.pow(t875, 2.0)
  t886 = prims.reshape(t878, (4, 2048, 2048, ))
  t888 = prims.sum(t886, (2, ))
  t892 = prims.broadcast_in_dim(t888, [4, 2048, 1], [0, 1])
  t897 = prims.div(t892, 2048.0)
  t904 = prims.reshape(t897, (4, 2048, 1, ))
  t906 = prims.add(t904, 1e-05)
  t908 = prims.rsqrt(t906)
  t913 = prims.broadcast_in_dim(t908, (4, 2048, 2048, ), (0, 1, 2, ))
  t919 = prims.mul(t875, t913)
  t926 = prims.broadcast_in_dim(t_model_layers_0_ffn_norm_weight, (4, 2048, 2048, ), (2, ))
  t923 = prims.convert_element_type(t919, dtypes.bfloat16)
  t934 = prims.convert_element_type(t926, dtypes.float32)
  t931 = prims.convert_element_type(t923, dtypes.float32)
  t937 = prims.mul(t931, t934)
  t941 = prims.convert_element_type(t937, dtypes.bfloat16)
  return (t872, t908, t941, )
