# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse29 and 1 more of its form
def viewfuse29(t1358, t1104, t1894):
  # t1358: "cpu bf16[4, 16, 2048, 128]"
  # t1104: "cpu bf16[4, 2048, 2048]"
  # t1894: "cpu bf16[8192, 2048]"
  t1347 = prims.transpose(t1358, (0, 2, 1, 3, ))
  t1142 = prims.reshape(t1347, (4, 2048, 2048, ))
  t1130 = prims.reshape(t1142, (8192, 2048, ))
  t1132 = prims.reshape(t1104, (8192, 2048, ))
  t1131 = prims.transpose(t1130, (1, 0, ))
  t1129 = prims.reshape(t1894, (4, 2048, 2048, ))
  return (t1132, t1131, )
