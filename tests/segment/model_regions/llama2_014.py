# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse22 and 3 more of its form
def viewfuse22(t1888, t1522, t1455):
  # t1888: "cpu bf16[8192, 2048]"
  # t1522: "cpu bf16[4, 2048, 5632]"
  # t1455: "cpu bf16[4, 2048, 2048]"
  t1512 = prims.reshape(t1888, (4, 2048, 2048, ))
  t1513 = prims.reshape(t1522, (8192, 5632, ))
  t1514 = prims.transpose(t1513, (1, 0, ))
  t1515 = prims.reshape(t1455, (8192, 2048, ))
  return (t1512, t1514, t1515, )
