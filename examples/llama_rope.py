# A Llama-style RoPE region: split q and k out of a fused qkv projection, move heads forward,
# rotate half (slice, neg, cat) and apply cos/sin. B=2, T=4, nh=2, hs=8, so qkv is [2, 4, 48]
# (REFERENCE.md section 5 uses qkv [8, 2048, 12288]).
def llama_rope(qkv, cos, sin):
  # qkv: "cuda:0 bf16[2, 4, 48]"
  # cos: "cuda:0 bf16[4, 8]"
  # sin: "cuda:0 bf16[4, 8]"
  t0 = prims.reshape(qkv, (2, 4, 3, 2, 8))  # t0: "cuda:0 bf16[2, 4, 3, 2, 8]"
  t1 = prims.slice_prim(t0, [0, 0, 0, 0, 0], [2, 4, 1, 2, 8], [1, 1, 1, 1, 1])  # t1: "cuda:0 bf16[2, 4, 1, 2, 8]"
  t2 = prims.slice_prim(t0, [0, 0, 1, 0, 0], [2, 4, 2, 2, 8], [1, 1, 1, 1, 1])  # t2: "cuda:0 bf16[2, 4, 1, 2, 8]"
  t3 = prims.squeeze(t1, (2,))  # t3: "cuda:0 bf16[2, 4, 2, 8]"
  t4 = prims.squeeze(t2, (2,))  # t4: "cuda:0 bf16[2, 4, 2, 8]"
  q = prims.transpose(t3, (0, 2, 1, 3))  # q: "cuda:0 bf16[2, 2, 4, 8]"
  k = prims.transpose(t4, (0, 2, 1, 3))  # k: "cuda:0 bf16[2, 2, 4, 8]"
  del t0, t1, t2, t3, t4
  # cos and sin broadcast over batch and heads, in f32.
  t5 = prims.convert_element_type(cos, dtypes.float32)  # t5: "cuda:0 f32[4, 8]"
  t6 = prims.broadcast_in_dim(t5, (2, 2, 4, 8), (2, 3))  # t6: "cuda:0 f32[2, 2, 4, 8]"
  t7 = prims.convert_element_type(sin, dtypes.float32)  # t7: "cuda:0 f32[4, 8]"
  t8 = prims.broadcast_in_dim(t7, (2, 2, 4, 8), (2, 3))  # t8: "cuda:0 f32[2, 2, 4, 8]"
  # q: rotate half and combine.
  t9 = prims.slice_prim(q, [0, 0, 0, 0], [2, 2, 4, 4], [1, 1, 1, 1])  # t9: "cuda:0 bf16[2, 2, 4, 4]"
  t10 = prims.slice_prim(q, [0, 0, 0, 4], [2, 2, 4, 8], [1, 1, 1, 1])  # t10: "cuda:0 bf16[2, 2, 4, 4]"
  t11 = prims.neg(t10)  # t11: "cuda:0 bf16[2, 2, 4, 4]"
  t12 = prims.cat([t11, t9], -1)  # t12: "cuda:0 bf16[2, 2, 4, 8]"
  t13 = prims.convert_element_type(q, dtypes.float32)  # t13: "cuda:0 f32[2, 2, 4, 8]"
  t14 = prims.convert_element_type(t12, dtypes.float32)  # t14: "cuda:0 f32[2, 2, 4, 8]"
  t15 = prims.mul(t13, t6)  # t15: "cuda:0 f32[2, 2, 4, 8]"
  t16 = prims.mul(t14, t8)  # t16: "cuda:0 f32[2, 2, 4, 8]"
  t17 = prims.add(t15, t16)  # t17: "cuda:0 f32[2, 2, 4, 8]"
  q_rope = prims.convert_element_type(t17, dtypes.bfloat16)  # q_rope: "cuda:0 bf16[2, 2, 4, 8]"
  # k: the same.
  t18 = prims.slice_prim(k, [0, 0, 0, 0], [2, 2, 4, 4], [1, 1, 1, 1])  # t18: "cuda:0 bf16[2, 2, 4, 4]"
  t19 = prims.slice_prim(k, [0, 0, 0, 4], [2, 2, 4, 8], [1, 1, 1, 1])  # t19: "cuda:0 bf16[2, 2, 4, 4]"
  t20 = prims.neg(t19)  # t20: "cuda:0 bf16[2, 2, 4, 4]"
  t21 = prims.cat([t20, t18], -1)  # t21: "cuda:0 bf16[2, 2, 4, 8]"
  t22 = prims.convert_element_type(k, dtypes.float32)  # t22: "cuda:0 f32[2, 2, 4, 8]"
  t23 = prims.convert_element_type(t21, dtypes.float32)  # t23: "cuda:0 f32[2, 2, 4, 8]"
  t24 = prims.mul(t22, t6)  # t24: "cuda:0 f32[2, 2, 4, 8]"
  t25 = prims.mul(t23, t8)  # t25: "cuda:0 f32[2, 2, 4, 8]"
  t26 = prims.add(t24, t25)  # t26: "cuda:0 f32[2, 2, 4, 8]"
  k_rope = prims.convert_element_type(t26, dtypes.bfloat16)  # k_rope: "cuda:0 bf16[2, 2, 4, 8]"
  return (q_rope, k_rope)
