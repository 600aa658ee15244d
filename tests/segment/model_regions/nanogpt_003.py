# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse3 and 1 more of its form
def viewfuse3(t1634):
  # t1634: "cpu bf16[8, 1024, 12, 64]"
  t678 = prims.reshape(t1634, (8, 1024, 768, ))
  return (t678, )
