# The seed's getitem failure: x[3:1] is an empty slice (Python clamps it to 3:3), so slice_prim
# produces a dim of size 0; compute on the empty result follows.
def getitem_empty_slice(x):
  # x: "cuda:0 f32[5, 6]"
  t0 = torch_slice_prim_impl(x, [3, 0], [3, 6], [1, 1])  # t0: "cuda:0 f32[0, 6]"
  t1 = prims.mul(t0, 2.0)  # t1: "cuda:0 f32[0, 6]"
  t2 = prims.sum(t1, (0,))  # t2: "cuda:0 f32[6]"
  t3 = prims.add(x, 1.0)  # t3: "cuda:0 f32[5, 6]"
  return (t1, t2, t3)
