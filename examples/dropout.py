# Dropout (p = 0.1) after a bias add in bf16, as Thunder writes F.dropout for viewfuse: the mask comes
# from uniform_philox of a seed and an offset (run-time ints that Thunder takes from torch's CUDA
# generator), so it is computed in the kernel, never stored. Activations [4, 64, 96].
def dropout(x, b, seed, offset):
  # x: "cuda:0 bf16[4, 64, 96]"
  # b: "cuda:0 bf16[96]"
  # seed: "int"
  # offset: "int"
  t0 = prims.broadcast_in_dim(b, (4, 64, 96), (2,))  # t0: "cuda:0 bf16[4, 64, 96]"
  t1 = prims.convert_element_type(x, dtypes.float32)  # t1: "cuda:0 f32[4, 64, 96]"
  t2 = prims.convert_element_type(t0, dtypes.float32)  # t2: "cuda:0 f32[4, 64, 96]"
  t3 = prims.add(t1, t2)  # t3: "cuda:0 f32[4, 64, 96]"
  t4 = prims.uniform_philox((4, 64, 96), 0.0, 1.0, device=devices.Device("cuda:0"), dtype=dtypes.float32, seed=seed, offset=offset)  # t4: "cuda:0 f32[4, 64, 96]"
  t5 = prims.lt(t4, 0.9)  # t5: "cuda:0 b8[4, 64, 96]"
  t6 = prims.convert_element_type(t5, dtypes.float32)  # t6: "cuda:0 f32[4, 64, 96]"
  t7 = prims.mul(t3, t6)  # t7: "cuda:0 f32[4, 64, 96]"
  t8 = prims.mul(t7, 1.1111111111111112)  # t8: "cuda:0 f32[4, 64, 96]"
  t9 = prims.convert_element_type(t8, dtypes.bfloat16)  # t9: "cuda:0 bf16[4, 64, 96]"
  return t9
