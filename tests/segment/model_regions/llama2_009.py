# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse53 and the regions of its form: 0 kernel(s)
# layout t6757: sizes [8192, 5632] strides [5632, 1] offset 0
# layout t5909: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5890: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
def t5890(t6757, t5909, t5890):
  # t6757: "cpu bf16[8192, 5632]"
  # t5909: "cpu bf16[4, 2048, 2048]"
  # t5890: "cpu bf16[4, 2048, 5632]"
  t5897 = prims.reshape(t6757, (4, 2048, 5632, ))
  t5898 = prims.reshape(t5909, (8192, 2048, ))
  t5899 = prims.transpose(t5898, (1, 0, ))
  t5900 = prims.reshape(t5890, (8192, 5632, ))
  return (t5897, t5899, t5900, )
