# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse31 and 3 more of its form
def viewfuse31(t1896, t1139, t1104):
  # t1896: "cpu bf16[8192, 2048]"
  # t1139: "cpu bf16[4, 2048, 2048]"
  # t1104: "cpu bf16[4, 2048, 2048]"
  t1120 = prims.reshape(t1896, (4, 2048, 2048, ))
  t1121 = prims.reshape(t1139, (8192, 2048, ))
  t1122 = prims.transpose(t1121, (1, 0, ))
  t1123 = prims.reshape(t1104, (8192, 2048, ))
  return (t1120, t1122, t1123, )
