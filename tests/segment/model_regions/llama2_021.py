# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse30 and 1 more of its form
def viewfuse30(t1139):
  # t1139: "cpu bf16[4, 2048, 2048]"
  t1118 = prims.reshape(t1139, (8192, 2048, ))
  return (t1118, )
