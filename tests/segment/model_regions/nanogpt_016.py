# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse72 and the regions of its form: 0 kernel(s)
# layout t7949: sizes [8192, 768] strides [768, 1] offset 0
# layout t6894: sizes [8, 1024, 2304] strides [2359296, 2304, 1] offset 0
# layout t6867: sizes [8, 1024, 768] strides [786432, 768, 1] offset 0
def t6867(t7949, t6894, t6867):
  # t7949: "cpu bf16[8192, 768]"
  # t6894: "cpu bf16[8, 1024, 2304]"
  # t6867: "cpu bf16[8, 1024, 768]"
  t6880 = prims.reshape(t7949, (8, 1024, 768, ))
  t6881 = prims.reshape(t6894, (8192, 2304, ))
  t6882 = prims.transpose(t6881, (1, 0, ))
  t6883 = prims.reshape(t6867, (8192, 768, ))
  return (t6880, t6882, t6883, )
