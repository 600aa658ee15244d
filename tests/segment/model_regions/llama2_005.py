# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse6 and 1 more of its form
def viewfuse6(t1870, t1871):
  # t1870: "cpu bf16[4, 2048, 5632]"
  # t1871: "cpu bf16[4, 2048, 5632]"
  t953 = prims.convert_element_type(t1870, dtypes.float32)
  t954 = prims.neg(t953)
  t955 = prims.exp(t954)
  t956 = prims.add(1.0, t955)
  t957 = prims.reciprocal(t956)
  t958 = prims.convert_element_type(t957, dtypes.bfloat16)
  t959 = prims.convert_element_type(t1870, dtypes.float32)
  t960 = prims.convert_element_type(t958, dtypes.float32)
  t961 = prims.mul(t959, t960)
  t962 = prims.convert_element_type(t961, dtypes.bfloat16)
  t1006 = prims.convert_element_type(t1871, dtypes.float32)
  t1003 = prims.convert_element_type(t962, dtypes.float32)
  t1009 = prims.mul(t1003, t1006)
  t1013 = prims.convert_element_type(t1009, dtypes.bfloat16)
  return (t1013, )
