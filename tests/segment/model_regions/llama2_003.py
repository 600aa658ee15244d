# llama2 step (2026-12-05, NVIDIA H100 80GB HBM3), region viewfuse3 and the regions of its form: 0 kernel(s)
# layout t6718: sizes [4, 2048, 16, 128] strides [4194304, 2048, 128, 1] offset 0
def viewfuse3(t6718):
  # t6718: "cpu bf16[4, 2048, 16, 128]"
  t2129 = prims.reshape(t6718, (4, 2048, 2048, ))
  return (t2129, )
