# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse22 and 1 more of its form
def viewfuse22(t1652, t1111, t1089):
  # t1652: "cpu bf16[8192, 768]"
  # t1111: "cpu bf16[8, 1024, 768]"
  # t1089: "cpu bf16[8, 1024, 768]"
  t1096 = prims.reshape(t1652, (8, 1024, 768, ))
  t1097 = prims.reshape(t1111, (8192, 768, ))
  t1098 = prims.transpose(t1097, (1, 0, ))
  t1099 = prims.reshape(t1089, (8192, 768, ))
  return (t1098, t1099, )
