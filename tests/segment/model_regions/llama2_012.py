# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse20 and 1 more of its form
def viewfuse20(t1886, t1546, t1527):
  # t1886: "cpu bf16[8192, 5632]"
  # t1546: "cpu bf16[4, 2048, 2048]"
  # t1527: "cpu bf16[4, 2048, 5632]"
  t1534 = prims.reshape(t1886, (4, 2048, 5632, ))
  t1535 = prims.reshape(t1546, (8192, 2048, ))
  t1536 = prims.transpose(t1535, (1, 0, ))
  t1537 = prims.reshape(t1527, (8192, 5632, ))
  return (t1534, t1536, t1537, )
