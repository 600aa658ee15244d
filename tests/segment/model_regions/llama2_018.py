# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse63 and the regions of its form: 0 kernel(s)
# layout t5502: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5502(t5502):
  # t5502: "cpu bf16[4, 2048, 2048]"
  t5481 = prims.reshape(t5502, (8192, 2048, ))
  return (t5481, )
