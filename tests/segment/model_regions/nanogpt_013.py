# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse69 and the regions of its form: 0 kernel(s)
# layout t7947: sizes [8192, 768] strides [768, 1] offset 0
# layout t6951: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
# layout t6929: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
def t6929(t7947, t6951, t6929):
  # t7947: "cpu bf16[8192, 768]"
  # t6951: "cpu bf16[8, 1024, 768]"
  # t6929: "cpu bf16[8, 1024, 768]"
  t6936 = prims.reshape(t7947, (8, 1024, 768, ))
  t6937 = prims.reshape(t6951, (8192, 768, ))
  t6938 = prims.transpose(t6937, (1, 0, ))
  t6939 = prims.reshape(t6929, (8192, 768, ))
  return (t6938, t6939, )
