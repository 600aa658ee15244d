# nanogpt step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse1 and the regions of its form: 0 kernel(s)
# layout t7892: sizes [8, 1024, 2304] strides [2359296, 2304, 1] offset 0
def t7892(t7892):
  # t7892: "cpu bf16[8, 1024, 2304]"
  t2367 = prims.slice_prim(t7892, [0, 0, 0], [8, 1024, 768], [1, 1, 1])
  t2368 = prims.slice_prim(t7892, [0, 0, 768], [8, 1024, 1536], [1, 1, 1])
  t2369 = prims.slice_prim(t7892, [0, 0, 1536], [8, 1024, 2304], [1, 1, 1])
  t2374 = prims.reshape(t2368, (8, 1024, 12, 64, ))
  t2377 = prims.transpose(t2374, (0, 2, 1, 3, ))
  t2380 = prims.reshape(t2367, (8, 1024, 12, 64, ))
  t2383 = prims.transpose(t2380, (0, 2, 1, 3, ))
  t2386 = prims.reshape(t2369, (8, 1024, 12, 64, ))
  t2389 = prims.transpose(t2386, (0, 2, 1, 3, ))
  return (t2377, t2383, t2389, )
