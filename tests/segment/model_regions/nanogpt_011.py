# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse67 and the regions of its form: 0 kernel(s)
# layout t7945: sizes [8192, 768] strides [768, 1] offset 0
# layout t7376: sizes [8, 1024, 3072] strides [3145728, 3072, 1] offset 0
# layout t7045: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
def t7045(t7945, t7376, t7045):
  # t7945: "cpu bf16[8192, 768]"
  # t7376: "cpu bf16[8, 1024, 3072]"
  # t7045: "cpu bf16[8, 1024, 768]"
  t7058 = prims.reshape(t7945, (8, 1024, 768, ))
  t7059 = prims.reshape(t7376, (8192, 3072, ))
  t7060 = prims.transpose(t7059, (1, 0, ))
  t7061 = prims.reshape(t7045, (8192, 768, ))
  return (t7058, t7060, t7061, )
