# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse16 and 0 more of its form
def viewfuse16(t1646, t1521, t1438):
  # t1646: "cpu bf16[8192, 768]"
  # t1521: "cpu bf16[8, 1024, 50304]"
  # t1438: "cpu bf16[8, 1024, 768]"
  t1451 = prims.reshape(t1646, (8, 1024, 768, ))
  t1452 = prims.reshape(t1521, (8192, 50304, ))
  t1453 = prims.transpose(t1452, (1, 0, ))
  t1454 = prims.reshape(t1438, (8192, 768, ))
  return (t1451, t1453, t1454, )
