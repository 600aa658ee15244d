# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse2 and the regions of its form: 0 kernel(s)
# layout t2392: sizes [8, 12, 1024, 64] strides [786432, 64, 768, 1] offset 0
def t2392(t2392):
  # t2392: "cpu bf16[8, 12, 1024, 64]"
  t2403 = prims.transpose(t2392, (0, 2, 1, 3, ))
  t2406 = prims.reshape(t2403, (8, 1024, 12, 64, ))
  t2408 = prims.reshape(t2406, (8, 1024, 768, ))
  return (t2408, )
