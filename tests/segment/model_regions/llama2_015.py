# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse60 and the regions of its form: 0 kernel(s)
# layout t6763: sizes [8192, 2048] strides [2048, 1] offset 0
def t6763(t6763):
  # t6763: "cpu bf16[8192, 2048]"
  t5734 = prims.reshape(t6763, (4, 2048, 2048, ))
  t5729 = prims.reshape(t5734, (4, 2048, 16, 128, ))
  t5724 = prims.transpose(t5729, (0, 2, 1, 3, ))
  return (t5724, )
