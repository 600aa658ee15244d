# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse2 and the regions of its form: 1 kernel(s)
# layout t2113: sizes [4, 16, 2048, 128] strides [4194304, 262144, 128, 1] offset 0
def t2113(t2113):
  # t2113: "cpu bf16[4, 16, 2048, 128]"
  t2124 = prims.transpose(t2113, (0, 2, 1, 3, ))
  t2127 = prims.reshape(t2124, (4, 2048, 16, 128, ))
  t2129 = prims.reshape(t2127, (4, 2048, 2048, ))
  return (t2129, )
