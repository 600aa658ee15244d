# nanogpt step (2026-12-05, NVIDIA H100 80GB HBM3), region viewfuse3 and the regions of its form: 0 kernel(s)
# layout t7919: sizes [8, 1024, 12, 64] strides [786432, 768, 64, 1] offset 0
def viewfuse3(t7919):
  # t7919: "cpu bf16[8, 1024, 12, 64]"
  t2408 = prims.reshape(t7919, (8, 1024, 768, ))
  return (t2408, )
