# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse64 and the regions of its form: 0 kernel(s)
# layout t6767: sizes [8192, 2048] strides [2048, 1] offset 0
# layout t5502: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5467: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5467(t6767, t5502, t5467):
  # t6767: "cpu bf16[8192, 2048]"
  # t5502: "cpu bf16[4, 2048, 2048]"
  # t5467: "cpu bf16[4, 2048, 2048]"
  t5483 = prims.reshape(t6767, (4, 2048, 2048, ))
  t5484 = prims.reshape(t5502, (8192, 2048, ))
  t5485 = prims.transpose(t5484, (1, 0, ))
  t5486 = prims.reshape(t5467, (8192, 2048, ))
  return (t5483, t5485, t5486, )
