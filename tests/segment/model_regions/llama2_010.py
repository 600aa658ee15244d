# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse18 and 0 more of its form
def viewfuse18(t1884, t1695, t1618):
  # t1884: "cpu bf16[8192, 2048]"
  # t1695: "cpu bf16[4, 2048, 32000]"
  # t1618: "cpu bf16[4, 2048, 2048]"
  t1625 = prims.reshape(t1884, (4, 2048, 2048, ))
  t1626 = prims.reshape(t1695, (8192, 32000, ))
  t1627 = prims.transpose(t1626, (1, 0, ))
  t1628 = prims.reshape(t1618, (8192, 2048, ))
  return (t1625, t1627, t1628, )
