# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse65 and the regions of its form: 0 kernel(s)
# layout t7943: sizes [8192, 3072] strides [3072, 1] offset 0
# layout t7184: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
# layout t7162: sizes [8, 1024, 3072] strides [3145728, 3072, 1] offset 0
def t7162(t7943, t7184, t7162):
  # t7943: "cpu bf16[8192, 3072]"
  # t7184: "cpu bf16[8, 1024, 768]"
  # t7162: "cpu bf16[8, 1024, 3072]"
  t7169 = prims.reshape(t7943, (8, 1024, 3072, ))
  t7170 = prims.reshape(t7184, (8192, 768, ))
  t7171 = prims.transpose(t7170, (1, 0, ))
  t7172 = prims.reshape(t7162, (8192, 3072, ))
  return (t7169, t7171, t7172, )
