# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse26 and 1 more of its form
def viewfuse26(t1892, t1383, t1364):
  # t1892: "cpu bf16[8192, 2048]"
  # t1383: "cpu bf16[4, 2048, 2048]"
  # t1364: "cpu bf16[4, 2048, 2048]"
  t1371 = prims.reshape(t1892, (4, 2048, 2048, ))
  t1372 = prims.reshape(t1383, (8192, 2048, ))
  t1373 = prims.transpose(t1372, (1, 0, ))
  t1374 = prims.reshape(t1364, (8192, 2048, ))
  return (t1373, t1374, )
