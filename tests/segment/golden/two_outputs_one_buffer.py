# y = x * 2 and z = reshape(transpose(y)) are both outputs: one kernel writes z, y is a view of it.
def two_outputs(x):
  # x: "cuda:0 f32[2, 4, 8, 16]"
  y = prims.mul(x, 2.0)  # y: "cuda:0 f32[2, 4, 8, 16]"
  t1 = prims.transpose(y, (0, 2, 1, 3))  # t1: "cuda:0 f32[2, 8, 4, 16]"
  z = prims.reshape(t1, (2, 8, 64))  # z: "cuda:0 f32[2, 8, 64]"
  return (y, z)
