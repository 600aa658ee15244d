# Causal masked softmax over the last dim in f32 with a bf16 result: the mask comes from iota and
# ge, masked scores are -inf. Scores [2, 2, 8, 8] (REFERENCE.md section 5 uses [8, 32, 2048, 2048]).
def causal_softmax(s):
  # s: "cuda:0 f32[2, 2, 8, 8]"
  t0 = prims.iota(8, start=0, step=1, device=devices.Device("cuda:0"), dtype=dtypes.int64)  # t0: "cuda:0 i64[8]"
  t1 = prims.broadcast_in_dim(t0, (8, 8), (0,))  # t1: "cuda:0 i64[8, 8]"
  t2 = prims.broadcast_in_dim(t0, (8, 8), (1,))  # t2: "cuda:0 i64[8, 8]"
  t3 = prims.ge(t1, t2)  # t3: "cuda:0 b8[8, 8]"
  t4 = prims.broadcast_in_dim(t3, (2, 2, 8, 8), (2, 3))  # t4: "cuda:0 b8[2, 2, 8, 8]"
  t5 = prims.where(t4, s, -float('inf'))  # t5: "cuda:0 f32[2, 2, 8, 8]"
  t6 = prims.amax(t5, (3,))  # t6: "cuda:0 f32[2, 2, 8]"
  t7 = prims.broadcast_in_dim(t6, (2, 2, 8, 8), (0, 1, 2))  # t7: "cuda:0 f32[2, 2, 8, 8]"
  t8 = prims.sub(t5, t7)  # t8: "cuda:0 f32[2, 2, 8, 8]"
  t9 = prims.exp(t8)  # t9: "cuda:0 f32[2, 2, 8, 8]"
  t10 = prims.sum(t9, (3,))  # t10: "cuda:0 f32[2, 2, 8]"
  t11 = prims.broadcast_in_dim(t10, (2, 2, 8, 8), (0, 1, 2))  # t11: "cuda:0 f32[2, 2, 8, 8]"
  t12 = prims.div(t9, t11)  # t12: "cuda:0 f32[2, 2, 8, 8]"
  t13 = prims.convert_element_type(t12, dtypes.bfloat16)  # t13: "cuda:0 bf16[2, 2, 8, 8]"
  return t13
