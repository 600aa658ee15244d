# viewfuse repro
# Found by the random fusion test (seed 2000525): a slice from 0 with step 1 of a computed value
# was lowered as a flat (contiguous) load, so log10(a)[:, :2] read a[i*2 + j] instead of a[i, j]
# (fixed in src/codegen/lower_kernel.cpp, KernelLowering::load, the in_order check).
# layout a: sizes [5, 3] strides [3, 1] offset 0
# values: seed 2000525
def computation(a):
  # a: "cpu f32[5, 3]"
  t0 = prims.log10(a)  # t0: "cpu f32[5, 3]"
  t1 = prims.slice_prim(t0, (0, 0), (5, 2), (1, 1))  # t1: "cpu f32[5, 2]"
  return t1
