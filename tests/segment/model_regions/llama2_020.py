# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse65 and the regions of its form: 1 kernel(s)
# layout t6765: sizes [8192, 2048] strides [2048, 1] offset 0
# layout t5499: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5483: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5483(t6765, t5499, t5483):
  # t6765: "cpu bf16[8192, 2048]"
  # t5499: "cpu bf16[4, 2048, 2048]"
  # t5483: "cpu bf16[4, 2048, 2048]"
  t5492 = prims.reshape(t6765, (4, 2048, 2048, ))
  t5472 = prims.reshape(t5499, (8192, 2048, ))
  t6094 = prims.convert_element_type(t5492, dtypes.float32)
  t6095 = prims.convert_element_type(t5483, dtypes.float32)
  t6096 = prims.add(t6094, t6095)
  t6097 = prims.convert_element_type(t6096, dtypes.bfloat16)
  return (t5472, t6097, )
