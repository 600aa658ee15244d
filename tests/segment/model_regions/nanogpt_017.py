# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse24 and 1 more of its form
def viewfuse24(t1083, t1081, t1082):
  # t1083: "cpu bf16[8, 12, 1024, 64]"
  # t1081: "cpu bf16[8, 12, 1024, 64]"
  # t1082: "cpu bf16[8, 12, 1024, 64]"
  t1072 = prims.transpose(t1083, (0, 2, 1, 3, ))
  t1069 = prims.reshape(t1072, (8, 1024, 768, ))
  t1066 = prims.transpose(t1081, (0, 2, 1, 3, ))
  t1063 = prims.reshape(t1066, (8, 1024, 768, ))
  t1060 = prims.transpose(t1082, (0, 2, 1, 3, ))
  t1057 = prims.reshape(t1060, (8, 1024, 768, ))
  t1054 = prims.cat([t1063, t1057, t1069], 2)
  t1038 = prims.reshape(t1054, (8192, 2304, ))
  return (t1054, t1038, )
