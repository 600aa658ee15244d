# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse3 and the regions of its form: 1 kernel(s)
# layout t6701: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t1797: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t_model_layers_0_ffn_norm_weight: sizes [2048] strides [1] offset 0
def t_model_layers_0_ffn_norm_weight(t6701, t1797, t_model_layers_0_ffn_norm_weight):
  # t6701: "cpu bf16[4, 2048, 2048]"
  # t1797: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_0_ffn_norm_weight: "cpu bf16[2048]"
  t2141 = prims.reshape(t6701, (4, 2048, 2048, ))
  t2143 = prims.convert_element_type(t1797, dtypes.float32)
  t2146 = prims.convert_element_type(t2141, dtypes.float32)
  t2149 = prims.add(t2143, t2146)
  t2151 = prims.convert_element_type(t2149, dtypes.bfloat16)
  t2154 = prims.convert_element_type(t2151, dtypes.float32)
  t2157 = prims.pow(t2154, 2.0)
  t2165 = prims.reshape(t2157, (4, 2048, 2048, ))
  t2167 = prims.sum(t2165, (2, ))
  t2171 = prims.broadcast_in_dim(t2167, [4, 2048, 1], [0, 1])
  t2176 = prims.div(t2171, 2048.0)
  t2183 = prims.reshape(t2176, (4, 2048, 1, ))
  t2185 = prims.add(t2183, 1e-05)
  t2187 = prims.rsqrt(t2185)
  t2192 = prims.broadcast_in_dim(t2187, (4, 2048, 2048, ), (0, 1, 2, ))
  t2198 = prims.mul(t2154, t2192)
  t2202 = prims.convert_element_type(t2198, dtypes.bfloat16)
  t2205 = prims.broadcast_in_dim(t_model_layers_0_ffn_norm_weight, (4, 2048, 2048, ), (2, ))
  t2210 = prims.convert_element_type(t2202, dtypes.float32)
  t2213 = prims.convert_element_type(t2205, dtypes.float32)
  t2216 = prims.mul(t2210, t2213)
  t2220 = prims.convert_element_type(t2216, dtypes.bfloat16)
  return (t2151, t2187, t2220, )
