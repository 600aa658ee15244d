# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse71 and the regions of its form: 1 kernel(s)
# layout t6923: sizes [8, 12, 1024, 64] strides [786432, 64, 768, 1] offset 0
# layout t6921: sizes [8, 12, 1024, 64] strides [786432, 64, 768, 1] offset 0
# layout t6922: sizes [8, 12, 1024, 64] strides [786432, 64, 768, 1] offset 0
def t6922(t6923, t6921, t6922):
  # t6923: "cpu bf16[8, 12, 1024, 64]"
  # t6921: "cpu bf16[8, 12, 1024, 64]"
  # t6922: "cpu bf16[8, 12, 1024, 64]"
  t6912 = prims.transpose(t6923, (0, 2, 1, 3, ))
  t6909 = prims.reshape(t6912, (8, 1024, 768, ))
  t6906 = prims.transpose(t6921, (0, 2, 1, 3, ))
  t6903 = prims.reshape(t6906, (8, 1024, 768, ))
  t6900 = prims.transpose(t6922, (0, 2, 1, 3, ))
  t6897 = prims.reshape(t6900, (8, 1024, 768, ))
  t6894 = prims.cat([t6903, t6897, t6909], 2)
  t6878 = prims.reshape(t6894, (8192, 2304, ))
  return (t6894, t6878, )
