# viewfuse repro
# Found by the random fusion test on CUDA (seed 20261604): a pad of an empty cat has no loads, so
# the nest stayed flat (no loop variables) while the pad's predicate read them; the kernel did not
# compile (fixed in src/codegen/lower_kernel.cpp, KernelLowering::select marks the nest not flat).
# layout a: sizes [2, 3, 33, 2] strides [198, 66, 2, 1] offset 0
# values: seed 20261604
def computation(a):
  # a: "cpu f32[2, 3, 33, 2]"
  t0 = prims.reshape(a, (6, 33, 2, 1))  # t0: "cpu f32[6, 33, 2, 1]"
  t1 = prims.pad(t0, 3, ((-8, -3, 1), (1, 2, 0), (1, 2, 0), (2, 2, 0)))  # t1: "cpu f32[0, 36, 5, 5]"
  t2 = prims.cat([t1, t1, t1], 0)  # t2: "cpu f32[0, 36, 5, 5]"
  t3 = prims.pad(t2, False, ((2, 1, 2), (0, 2, 2), (2, -4, 0), (2, 0, 1)))  # t3: "cpu f32[3, 108, 3, 11]"
  return t3
