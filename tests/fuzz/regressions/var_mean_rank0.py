# viewfuse repro
# Found by the random fusion test (seed 20261227) in the reduction code generator under
# development: var_mean over no dims of a rank-0 tensor generated a CPU kernel reading an
# undeclared accumulator ("error: 'acc0' was not declared in this scope").
# layout c: sizes [] strides [] offset 0
# values: seed 20261227
def computation(c):
  # c: "cpu f32[]"
  (t0, t1) = prims.var_mean(c, (), correction=1)
  return (t0, t1)
