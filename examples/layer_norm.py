# Layer norm of x [N, C] over C with weight and bias, via var_mean with correction=0.
# N=16, C=32 (REFERENCE.md section 5 uses [16384, 4096]).
def layer_norm(x, w, b):
  # x: "cuda:0 f32[16, 32]"
  # w: "cuda:0 f32[32]"
  # b: "cuda:0 f32[32]"
  (t0, t1) = prims.var_mean(x, (1,), correction=0)
  t2 = prims.add(t0, 1e-05)  # t2: "cuda:0 f32[16]"
  t3 = prims.rsqrt(t2)  # t3: "cuda:0 f32[16]"
  t4 = prims.broadcast_in_dim(t1, (16, 32), (0,))  # t4: "cuda:0 f32[16, 32]"
  t5 = prims.broadcast_in_dim(t3, (16, 32), (0,))  # t5: "cuda:0 f32[16, 32]"
  t6 = prims.sub(x, t4)  # t6: "cuda:0 f32[16, 32]"
  t7 = prims.mul(t6, t5)  # t7: "cuda:0 f32[16, 32]"
  t8 = prims.broadcast_in_dim(w, (16, 32), (1,))  # t8: "cuda:0 f32[16, 32]"
  t9 = prims.broadcast_in_dim(b, (16, 32), (1,))  # t9: "cuda:0 f32[16, 32]"
  t10 = prims.mul(t7, t8)  # t10: "cuda:0 f32[16, 32]"
  t11 = prims.add(t10, t9)  # t11: "cuda:0 f32[16, 32]"
  return t11
