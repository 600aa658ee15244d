# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse62 and the regions of its form: 1 kernel(s)
# layout targets: sizes [8, 1024] strides [1024, 1] offset 0
# layout t7355: sizes [] strides [] offset 0
# layout t7318: sizes [8192, 50304] strides [50304, 1] offset 0
# layout t7350: sizes [] strides [] offset 0
def t7350(targets, t7355, t7318, t7350):
  # targets: "cpu i64[8, 1024]"
  # t7355: "cpu bf16[]"
  # t7318: "cpu bf16[8192, 50304]"
  # t7350: "cpu i64[]"
  t2192 = prims.reshape(targets, (8192, ))
  t7356 = ltorch.nll_loss_backward(t7355, t7318, t2192, None, 'mean', -1, t7350)
  t7320 = prims.convert_element_type(t7318, dtypes.float32)
  t7321 = prims.exp(t7320)
  t7322 = prims.convert_element_type(t7321, dtypes.bfloat16)
  t7323 = prims.convert_element_type(t7356, dtypes.float32)
  t7324 = prims.sum(t7323, (1, ))
  t7325 = prims.broadcast_in_dim(t7324, [8192, 1], [0])
  t7326 = prims.convert_element_type(t7325, dtypes.bfloat16)
  t7327 = prims.broadcast_in_dim(t7326, (8192, 50304, ), (0, 1, ))
  t7328 = prims.convert_element_type(t7322, dtypes.float32)
  t7329 = prims.convert_element_type(t7327, dtypes.float32)
  t7330 = prims.mul(t7328, t7329)
  t7331 = prims.convert_element_type(t7330, dtypes.bfloat16)
  t7332 = prims.convert_element_type(t7356, dtypes.float32)
  t7333 = prims.convert_element_type(t7331, dtypes.float32)
  t7334 = prims.sub(t7332, t7333)
  t7335 = prims.convert_element_type(t7334, dtypes.bfloat16)
  t7336 = prims.reshape(t7335, (8192, 50304, ))
  t7298 = prims.reshape(t7336, (8, 1024, 50304, ))
  t7289 = prims.reshape(t7298, (8192, 50304, ))
  return (t7298, t7289, )
