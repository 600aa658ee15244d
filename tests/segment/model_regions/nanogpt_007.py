# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse63 and the regions of its form: 0 kernel(s)
# layout t7941: sizes [8192, 768] strides [768, 1] offset 0
# layout t7298: sizes [8, 1024, 50304] strides [51511296, 50304, 1] offset 0
# layout t7278: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
def t7278(t7941, t7298, t7278):
  # t7941: "cpu bf16[8192, 768]"
  # t7298: "cpu bf16[8, 1024, 50304]"
  # t7278: "cpu bf16[8, 1024, 768]"
  t7291 = prims.reshape(t7941, (8, 1024, 768, ))
  t7292 = prims.reshape(t7298, (8192, 50304, ))
  t7293 = prims.transpose(t7292, (1, 0, ))
  t7294 = prims.reshape(t7278, (8192, 768, ))
  return (t7291, t7293, t7294, )
