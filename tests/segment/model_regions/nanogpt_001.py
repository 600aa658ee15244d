# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse1 and 1 more of its form
def viewfuse1(t1633):
  # t1633: "cpu bf16[8, 1024, 2304]"
  t637 = prims.slice_prim(t1633, [0, 0, 0], [8, 1024, 768], [1, 1, 1])
  t638 = prims.slice_prim(t1633, [0, 0, 768], [8, 1024, 1536], [1, 1, 1])
  t639 = prims.slice_prim(t1633, [0, 0, 1536], [8, 1024, 2304], [1, 1, 1])
  t644 = prims.reshape(t638, (8, 1024, 12, 64, ))
  t647 = prims.transpose(t644, (0, 2, 1, 3, ))
  t650 = prims.reshape(t637, (8, 1024, 12, 64, ))
  t653 = prims.transpose(t650, (0, 2, 1, 3, ))
  t656 = prims.reshape(t639, (8, 1024, 12, 64, ))
  t659 = prims.transpose(t656, (0, 2, 1, 3, ))
  return (t647, t653, t659, )
