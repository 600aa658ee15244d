# RMS norm of x [N, C] over C with f32 math and a bf16 weight and result.
# N=16, C=32 (REFERENCE.md section 5 uses [16384, 4096]).
def rms_norm(x, w):
  # x: "cuda:0 bf16[16, 32]"
  # w: "cuda:0 bf16[32]"
  t0 = prims.convert_element_type(x, dtypes.float32)  # t0: "cuda:0 f32[16, 32]"
  t1 = prims.mul(t0, t0)  # t1: "cuda:0 f32[16, 32]"
  t2 = prims.sum(t1, (1,))  # t2: "cuda:0 f32[16]"
  t3 = prims.div(t2, 32.0)  # t3: "cuda:0 f32[16]"
  t4 = prims.add(t3, 1e-06)  # t4: "cuda:0 f32[16]"
  t5 = prims.rsqrt(t4)  # t5: "cuda:0 f32[16]"
  t6 = prims.broadcast_in_dim(t5, (16, 32), (0,))  # t6: "cuda:0 f32[16, 32]"
  t7 = prims.mul(t0, t6)  # t7: "cuda:0 f32[16, 32]"
  t8 = prims.convert_element_type(w, dtypes.float32)  # t8: "cuda:0 f32[32]"
  t9 = prims.broadcast_in_dim(t8, (16, 32), (1,))  # t9: "cuda:0 f32[16, 32]"
  t10 = prims.mul(t7, t9)  # t10: "cuda:0 f32[16, 32]"
  t11 = prims.convert_element_type(t10, dtypes.bfloat16)  # t11: "cuda:0 bf16[16, 32]"
  return t11
