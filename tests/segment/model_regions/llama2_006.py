# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse7 and 2 more of its form
def viewfuse7(t1872, t872, t_model_layers_1_attention_norm_weight):
  # t1872: "cpu bf16[4, 2048, 2048]"
  # t872: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_1_attention_norm_weight: "cpu bf16[2048]"
  t1025 = prims.reshape(t1872, (4, 2048, 2048, ))
  t1027 = prims.convert_element_type(t872, dtypes.float32)
  t1030 = prims.convert_element_type(t1025, dtypes.float32)
  t1033 = prims.add(t1027, t1030)
  t1035 = prims.convert_element_type(t1033, dtypes.bfloat16)
  t1038 = prims.convert_element_type(t1035, dtypes.float32)
  t1041 = prims.pow(t1038, 2.0)
  t1049 = prims.reshape(t1041, (4, 2048, 2048, ))
  t1051 = prims.sum(t1049, (2, ))
  t1055 = prims.broadcast_in_dim(t1051, [4, 2048, 1], [0, 1])
  t1060 = prims.div(t1055, 2048.0)
  t1067 = prims.reshape(t1060, (4, 2048, 1, ))
  t1069 = prims.add(t1067, 1e-05)
  t1071 = prims.rsqrt(t1069)
  t1076 = prims.broadcast_in_dim(t1071, (4, 2048, 2048, ), (0, 1, 2, ))
  t1082 = prims.mul(t1038, t1076)
  t1086 = prims.convert_element_type(t1082, dtypes.bfloat16)
  t1089 = prims.broadcast_in_dim(t_model_layers_1_attention_norm_weight, (4, 2048, 2048, ), (2, ))
  t1094 = prims.convert_element_type(t1086, dtypes.float32)
  t1097 = prims.convert_element_type(t1089, dtypes.float32)
  t1100 = prims.mul(t1094, t1097)
  t1104 = prims.convert_element_type(t1100, dtypes.bfloat16)
  return (t1035, t1071, t1104, )
