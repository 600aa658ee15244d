# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse51 and the regions of its form: 0 kernel(s)
# layout t6755: sizes [8192, 2048] strides [2048, 1] offset 0
# layout t5995: sizes [4, 2048, 32000] strides [65536000, 32000, 1] offset 0
# layout t5981: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5981(t6755, t5995, t5981):
  # t6755: "cpu bf16[8192, 2048]"
  # t5995: "cpu bf16[4, 2048, 32000]"
  # t5981: "cpu bf16[4, 2048, 2048]"
  t5988 = prims.reshape(t6755, (4, 2048, 2048, ))
  t5989 = prims.reshape(t5995, (8192, 32000, ))
  t5990 = prims.transpose(t5989, (1, 0, ))
  t5991 = prims.reshape(t5981, (8192, 2048, ))
  return (t5988, t5990, t5991, )
