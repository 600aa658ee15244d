# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse18 and 1 more of its form
def viewfuse18(t1648, t1344, t1322):
  # t1648: "cpu bf16[8192, 3072]"
  # t1344: "cpu bf16[8, 1024, 768]"
  # t1322: "cpu bf16[8, 1024, 3072]"
  t1329 = prims.reshape(t1648, (8, 1024, 3072, ))
  t1330 = prims.reshape(t1344, (8192, 768, ))
  t1331 = prims.transpose(t1330, (1, 0, ))
  t1332 = prims.reshape(t1322, (8192, 3072, ))
  return (t1329, t1331, t1332, )
