# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse20 and 1 more of its form
def viewfuse20(t1650, t1541, t1205):
  # t1650: "cpu bf16[8192, 768]"
  # t1541: "cpu bf16[8, 1024, 3072]"
  # t1205: "cpu bf16[8, 1024, 768]"
  t1218 = prims.reshape(t1650, (8, 1024, 768, ))
  t1219 = prims.reshape(t1541, (8192, 3072, ))
  t1220 = prims.transpose(t1219, (1, 0, ))
  t1221 = prims.reshape(t1205, (8192, 768, ))
  return (t1218, t1220, t1221, )
