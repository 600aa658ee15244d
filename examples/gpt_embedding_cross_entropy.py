# A GPT's token and position embeddings (take, with the positions from iota) in one kernel, and
# its cross-entropy loss: each row's log-softmax and the target's element of it (take_along_axis),
# the pick computed from the row's max and sum without the log-softmax in memory.
# B=2, T=8, vocabulary V=64, C=16.
def gpt_embedding_cross_entropy(ids, wte, wpe, logits, targets):
  # ids: "cuda:0 i64[2, 8]"
  # wte: "cuda:0 f32[64, 16]"
  # wpe: "cuda:0 f32[8, 16]"
  # logits: "cuda:0 f32[16, 64]"
  # targets: "cuda:0 i64[16]"
  t0 = prims.reshape(ids, (16,))  # t0: "cuda:0 i64[16]"
  t1 = prims.take(wte, t0, 0)  # t1: "cuda:0 f32[16, 16]"
  t2 = prims.reshape(t1, (2, 8, 16))  # t2: "cuda:0 f32[2, 8, 16]"
  t3 = prims.iota(8, start=0, step=1, device=devices.Device("cuda:0"), dtype=dtypes.int64)  # t3: "cuda:0 i64[8]"
  t4 = prims.take(wpe, t3, 0)  # t4: "cuda:0 f32[8, 16]"
  t5 = prims.broadcast_in_dim(t4, (2, 8, 16), (1, 2))  # t5: "cuda:0 f32[2, 8, 16]"
  x = prims.add(t2, t5)  # x: "cuda:0 f32[2, 8, 16]"
  t6 = prims.amax(logits, (1,))  # t6: "cuda:0 f32[16]"
  t7 = prims.broadcast_in_dim(t6, (16, 64), (0,))  # t7: "cuda:0 f32[16, 64]"
  t8 = prims.sub(logits, t7)  # t8: "cuda:0 f32[16, 64]"
  t9 = prims.exp(t8)  # t9: "cuda:0 f32[16, 64]"
  t10 = prims.sum(t9, (1,))  # t10: "cuda:0 f32[16]"
  t11 = prims.log(t10)  # t11: "cuda:0 f32[16]"
  t12 = prims.broadcast_in_dim(t11, (16, 64), (0,))  # t12: "cuda:0 f32[16, 64]"
  t13 = prims.sub(t8, t12)  # t13: "cuda:0 f32[16, 64]"
  t14 = prims.broadcast_in_dim(targets, (16, 1), (0,))  # t14: "cuda:0 i64[16, 1]"
  t15 = prims.take_along_axis(t13, t14, 1)  # t15: "cuda:0 f32[16, 1]"
  t16 = prims.neg(t15)  # t16: "cuda:0 f32[16, 1]"
  t17 = prims.sum(t16, (0, 1))  # t17: "cuda:0 f32[]"
  loss = prims.div(t17, 16.0)  # loss: "cuda:0 f32[]"
  return (x, loss)
