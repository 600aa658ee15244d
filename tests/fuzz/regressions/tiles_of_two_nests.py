# viewfuse repro
# Found by the random fusion test on CUDA (seed 5003499): outputs of two shapes make two tiled
# transpose nests in one kernel, whose shared-memory tiles together passed the 48 KB a kernel
# can declare (ptxas: too much shared data). Fixed in src/codegen/schedule_cuda.cpp: tile_sides shares
# 40 KB among a kernel's tiled nests.
# layout a: sizes [6, 6] strides [6, 1] offset 7
# layout b: sizes [6, 6] strides [1, 0] offset 0
# layout c: sizes [6, 6] strides [1, 8] offset 0
# values: seed 5003499
def computation(a, b, c):
  # a: "cpu bf16[6, 6]"
  # b: "cpu i64[6, 6]"
  # c: "cpu ui8[6, 6]"
  t0 = prims.reshape(b, (1, 6, 6))  # t0: "cpu i64[1, 6, 6]"
  t1 = prims.fmod(t0, t0)  # t1: "cpu i64[1, 6, 6]"
  t2 = prims.convert_element_type(b, dtypes.bool)  # t2: "cpu b8[6, 6]"
  t3 = prims.where(t2, 1, c)  # t3: "cpu ui8[6, 6]"
  t4 = prims.convert_element_type(t3, dtypes.float32)  # t4: "cpu f32[6, 6]"
  return (t4, t1, t2)
