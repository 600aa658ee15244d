# The seed's Falcon-like failure: cat of a kv cache that is still empty ([2, 0, 8]) with new
# entries, followed by compute on the result.
def falcon_cat_empty(past, k, extra):
  # past: "cuda:0 f32[2, 0, 8]"
  # k: "cuda:0 f32[2, 3, 8]"
  # extra: "cuda:0 f32[2, 1, 8]"
  t0 = prims.cat([past, k, extra], 1)  # t0: "cuda:0 f32[2, 4, 8]"
  t1 = prims.mul(t0, 0.5)  # t1: "cuda:0 f32[2, 4, 8]"
  t2 = prims.exp(t1)  # t2: "cuda:0 f32[2, 4, 8]"
  t3 = prims.cat([past, past], 1)  # t3: "cuda:0 f32[2, 0, 8]"
  t4 = prims.neg(t3)  # t4: "cuda:0 f32[2, 0, 8]"
  return (t2, t4)
