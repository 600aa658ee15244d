# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse27 and 1 more of its form
def viewfuse27(t1892):
  # t1892: "cpu bf16[8192, 2048]"
  t1371 = prims.reshape(t1892, (4, 2048, 2048, ))
  t1366 = prims.reshape(t1371, (4, 2048, 16, 128, ))
  t1361 = prims.transpose(t1366, (0, 2, 1, 3, ))
  return (t1361, )
