# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse25 and 1 more of its form
def viewfuse25(t1654, t1054, t1027):
  # t1654: "cpu bf16[8192, 768]"
  # t1054: "cpu bf16[8, 1024, 2304]"
  # t1027: "cpu bf16[8, 1024, 768]"
  t1040 = prims.reshape(t1654, (8, 1024, 768, ))
  t1041 = prims.reshape(t1054, (8192, 2304, ))
  t1042 = prims.transpose(t1041, (1, 0, ))
  t1043 = prims.reshape(t1027, (8192, 768, ))
  return (t1040, t1042, t1043, )
