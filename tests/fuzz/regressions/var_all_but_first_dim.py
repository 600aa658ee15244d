# viewfuse repro
# Found by the random fusion test (seed 20261208) in the reduction code generator under
# development: var with correction=0 over dims (1, 2, 3) of [1, 1, 1, 2] gave 1.41921759, the
# reference 0.373296738.
# layout a: sizes [1, 1, 1, 2] strides [1, 1, 1, 1] offset 0
# values: seed 20261208
def computation(a):
  # a: "cpu f32[1, 1, 1, 2]"
  t0 = prims.var(a, (1, 2, 3), correction=0)  # t0: "cpu f32[1]"
  return t0
