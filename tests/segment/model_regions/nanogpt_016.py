# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse23 and 1 more of its form
def viewfuse23(t1652, t1111):
  # t1652: "cpu bf16[8192, 768]"
  # t1111: "cpu bf16[8, 1024, 768]"
  t1096 = prims.reshape(t1652, (8, 1024, 768, ))
  t1091 = prims.reshape(t1096, (8, 1024, 12, 64, ))
  t1086 = prims.transpose(t1091, (0, 2, 1, 3, ))
  t1101 = prims.convert_element_type(t1111, dtypes.float32)
  t1102 = prims.sum(t1101, (0, 1, ))
  t1103 = prims.convert_element_type(t1102, dtypes.bfloat16)
  return (t1103, t1086, )
