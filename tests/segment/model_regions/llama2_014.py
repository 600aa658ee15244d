# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse59 and the regions of its form: 0 kernel(s)
# layout t6763: sizes [8192, 2048] strides [2048, 1] offset 0
# layout t5746: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5727: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5727(t6763, t5746, t5727):
  # t6763: "cpu bf16[8192, 2048]"
  # t5746: "cpu bf16[4, 2048, 2048]"
  # t5727: "cpu bf16[4, 2048, 2048]"
  t5734 = prims.reshape(t6763, (4, 2048, 2048, ))
  t5735 = prims.reshape(t5746, (8192, 2048, ))
  t5736 = prims.transpose(t5735, (1, 0, ))
  t5737 = prims.reshape(t5727, (8192, 2048, ))
  return (t5736, t5737, )
