# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse55 and the regions of its form: 0 kernel(s)
# layout t6759: sizes [8192, 2048] strides [2048, 1] offset 0
# layout t5885: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
# layout t5818: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5818(t6759, t5885, t5818):
  # t6759: "cpu bf16[8192, 2048]"
  # t5885: "cpu bf16[4, 2048, 5632]"
  # t5818: "cpu bf16[4, 2048, 2048]"
  t5875 = prims.reshape(t6759, (4, 2048, 2048, ))
  t5876 = prims.reshape(t5885, (8192, 5632, ))
  t5877 = prims.transpose(t5876, (1, 0, ))
  t5878 = prims.reshape(t5818, (8192, 2048, ))
  return (t5875, t5877, t5878, )
