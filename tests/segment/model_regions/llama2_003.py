# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse3 and 1 more of its form
def viewfuse3(t1868):
  # t1868: "cpu bf16[4, 2048, 16, 128]"
  t850 = prims.reshape(t1868, (4, 2048, 2048, ))
  return (t850, )
