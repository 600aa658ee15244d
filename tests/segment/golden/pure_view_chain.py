# Only view ops: the output is a view of the input, no kernel and no allocation.
def views(x):
  # x: "cuda:0 f32[4, 6, 8]"
  t0 = prims.reshape(x, (4, 48))  # t0: "cuda:0 f32[4, 48]"
  t1 = prims.transpose(t0, (1, 0))  # t1: "cuda:0 f32[48, 4]"
  t2 = prims.slice_prim(t1, (0, 1), (48, 4), (2, 1))  # t2: "cuda:0 f32[24, 3]"
  t3 = prims.broadcast_in_dim(t2, (5, 24, 3), (1, 2))  # t3: "cuda:0 f32[5, 24, 3]"
  return t3
