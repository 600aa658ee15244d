# Compute followed by permute + reshape into an output: the kernel writes the final layout.
def merge_heads(x):
  # x: "cuda:0 f32[2, 4, 8, 16]"
  t0 = prims.mul(x, 2.0)  # t0: "cuda:0 f32[2, 4, 8, 16]"
  t1 = prims.add(t0, 1.0)  # t1: "cuda:0 f32[2, 4, 8, 16]"
  t2 = prims.transpose(t1, (0, 2, 1, 3))  # t2: "cuda:0 f32[2, 8, 4, 16]"
  t3 = prims.reshape(t2, (2, 8, 64))  # t3: "cuda:0 f32[2, 8, 64]"
  return t3
