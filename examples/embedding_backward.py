# The gradient of a tied embedding (nanoGPT's wte) in bf16, as Thunder writes it: the embedding's
# backward (each token's gradient row added at its id's row: a scatter_add) plus the lm_head's
# weight gradient. The scatter adds in float32 into a buffer of its own, zeroed at launch (atomic
# adds on CUDA); its rounding to bf16 and the add fuse into the next kernel. Tokens [2, 64], a
# vocabulary of 512, rows of 96.
def wte_grad(g, ids, g_head):
  # g: "cuda:0 bf16[2, 64, 96]"
  # ids: "cuda:0 i64[2, 64]"
  # g_head: "cuda:0 bf16[512, 96]"
  t0 = ltorch.embedding_backward(g, ids, 512, -1, False, False)  # t0: "cuda:0 bf16[512, 96]"
  t1 = prims.convert_element_type(t0, dtypes.float32)  # t1: "cuda:0 f32[512, 96]"
  t2 = prims.convert_element_type(g_head, dtypes.float32)  # t2: "cuda:0 f32[512, 96]"
  t3 = prims.add(t1, t2)  # t3: "cuda:0 f32[512, 96]"
  t4 = prims.convert_element_type(t3, dtypes.bfloat16)  # t4: "cuda:0 bf16[512, 96]"
  return t4
