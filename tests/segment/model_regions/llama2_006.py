# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse50 and the regions of its form: 1 kernel(s)
# layout targets: sizes [4, 2048] strides [2048, 1] offset 0
# layout t6052: sizes [] strides [] offset 0
# layout t6015: sizes [8192, 32000] strides [32000, 1] offset 0
# layout t6047: sizes [] strides [] offset 0
def t6047(targets, t6052, t6015, t6047):
  # targets: "cpu i64[4, 2048]"
  # t6052: "cpu bf16[]"
  # t6015: "cpu bf16[8192, 32000]"
  # t6047: "cpu i64[]"
  t1752 = prims.reshape(targets, (8192, ))
  t6053 = ltorch.nll_loss_backward(t6052, t6015, t1752, None, 'mean', -100, t6047)
  t6017 = prims.convert_element_type(t6015, dtypes.float32)
  t6018 = prims.exp(t6017)
  t6019 = prims.convert_element_type(t6018, dtypes.bfloat16)
  t6020 = prims.convert_element_type(t6053, dtypes.float32)
  t6021 = prims.sum(t6020, (1, ))
  t6022 = prims.broadcast_in_dim(t6021, [8192, 1], [0])
  t6023 = prims.convert_element_type(t6022, dtypes.bfloat16)
  t6024 = prims.broadcast_in_dim(t6023, (8192, 32000, ), (0, 1, ))
  t6025 = prims.convert_element_type(t6019, dtypes.float32)
  t6026 = prims.convert_element_type(t6024, dtypes.float32)
  t6027 = prims.mul(t6025, t6026)
  t6028 = prims.convert_element_type(t6027, dtypes.bfloat16)
  t6029 = prims.convert_element_type(t6053, dtypes.float32)
  t6030 = prims.convert_element_type(t6028, dtypes.float32)
  t6031 = prims.sub(t6029, t6030)
  t6032 = prims.convert_element_type(t6031, dtypes.bfloat16)
  t6033 = prims.reshape(t6032, (8192, 32000, ))
  t5995 = prims.reshape(t6033, (4, 2048, 32000, ))
  t5986 = prims.reshape(t5995, (8192, 32000, ))
  return (t5995, t5986, )
