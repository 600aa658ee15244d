# llama2 step (2026-12-05, NVIDIA H100 80GB HBM3), region viewfuse50 and the regions of its form: 1 kernel(s)
# layout t6764: sizes [8192, 1] strides [1, 1] offset 0
# layout t6038: sizes [8192, 1] strides [1, 1] offset 0
def t6038(t6764, t6038):
  # t6764: "cpu bf16[8192, 1]"
  # t6038: "cpu b8[8192, 1]"
  t6042 = prims.convert_element_type(t6764, dtypes.float32)
  t6043 = prims.sum(t6042, (0, 1, ))
  t6044 = prims.convert_element_type(t6043, dtypes.bfloat16)
  t6045 = prims.convert_element_type(t6038, dtypes.int64)
  t6046 = prims.sum(t6045, (0, 1, ))
  t6047 = prims.reshape(t6046, ())
  t6048 = prims.convert_element_type(t6044, dtypes.float32)
  t6049 = prims.convert_element_type(t6047, dtypes.float32)
  t6050 = prims.div(t6048, t6049)
  t6051 = prims.convert_element_type(t6050, dtypes.bfloat16)
  return (t6047, t6051, )
