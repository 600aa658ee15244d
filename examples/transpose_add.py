# A 2-D transpose added to another tensor: a [24, 16] -> [16, 24] plus b [16, 24].
# (REFERENCE.md section 5 uses f32 [8192, 8192].)
def transpose_add(a, b):
  # a: "cuda:0 f32[24, 16]"
  # b: "cuda:0 f32[16, 24]"
  t0 = prims.transpose(a, (1, 0))  # t0: "cuda:0 f32[16, 24]"
  t1 = prims.add(t0, b)  # t1: "cuda:0 f32[16, 24]"
  return t1
