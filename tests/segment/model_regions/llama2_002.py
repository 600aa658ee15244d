# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse2 and 1 more of its form
def viewfuse2(t834):
  # t834: "cpu bf16[4, 16, 2048, 128]"
  t845 = prims.transpose(t834, (0, 2, 1, 3, ))
  return (t845, )
