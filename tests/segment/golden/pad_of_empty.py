# pad of an empty tensor is a fill: one kernel that reads nothing.
def f(x):
  # x: "cuda:0 f32[0, 4]"
  t0 = prims.pad(x, 1.5, ((1, 1, 0), (0, 0, 0)))  # t0: "cuda:0 f32[2, 4]"
  return t0
