# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse2 and 1 more of its form
def viewfuse2(t662):
  # t662: "cpu bf16[8, 12, 1024, 64]"
  t673 = prims.transpose(t662, (0, 2, 1, 3, ))
  return (t673, )
