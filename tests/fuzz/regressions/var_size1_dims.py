# viewfuse repro
# Found by the random fusion test (seed 20261226) in the reduction code generator under
# development: var over a dim of 2 between dims of size 1 gave 2.94187808, the reference 1.82295549.
# layout a: sizes [1, 1, 2, 1] strides [1, 1, 1, 1] offset 0
# values: seed 20261226
def computation(a):
  # a: "cpu f32[1, 1, 2, 1]"
  t0 = prims.var(a, (2,), correction=1)  # t0: "cpu f32[1, 1, 1]"
  return t0
