# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse62 and the regions of its form: 0 kernel(s)
# layout t5721: sizes [4, 16, 2048, 128] strides [4194304, 128, 2048, 1] offset 0
# layout t5467: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t6765: sizes [8192, 2048] strides [2048, 1] offset 0
def t6765(t5721, t5467, t6765):
  # t5721: "cpu bf16[4, 16, 2048, 128]"
  # t5467: "cpu bf16[4, 2048, 2048]"
  # t6765: "cpu bf16[8192, 2048]"
  t5710 = prims.transpose(t5721, (0, 2, 1, 3, ))
  t5505 = prims.reshape(t5710, (4, 2048, 2048, ))
  t5493 = prims.reshape(t5505, (8192, 2048, ))
  t5495 = prims.reshape(t5467, (8192, 2048, ))
  t5494 = prims.transpose(t5493, (1, 0, ))
  t5492 = prims.reshape(t6765, (4, 2048, 2048, ))
  return (t5495, t5494, )
