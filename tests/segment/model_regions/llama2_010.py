# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse54 and the regions of its form: 1 kernel(s)
# layout t6751: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
# layout t5897: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
# layout t6752: sizes [4, 2048, 5632] strides [11534336, 5632, 1] offset 0
def t6752(t6751, t5897, t6752):
  # t6751: "cpu bf16[4, 2048, 5632]"
  # t5897: "cpu bf16[4, 2048, 5632]"
  # t6752: "cpu bf16[4, 2048, 5632]"
  t5830 = prims.convert_element_type(t6751, dtypes.float32)
  t5831 = prims.neg(t5830)
  t5832 = prims.exp(t5831)
  t5833 = prims.add(1.0, t5832)
  t5834 = prims.reciprocal(t5833)
  t5835 = prims.convert_element_type(t5834, dtypes.bfloat16)
  t5836 = prims.convert_element_type(t6751, dtypes.float32)
  t5837 = prims.convert_element_type(t5835, dtypes.float32)
  t5838 = prims.mul(t5836, t5837)
  t5839 = prims.convert_element_type(t5838, dtypes.bfloat16)
  t5892 = prims.convert_element_type(t5897, dtypes.float32)
  t5880 = prims.convert_element_type(t5839, dtypes.float32)
  t5889 = prims.mul(t5880, t5892)
  t5883 = prims.convert_element_type(t6752, dtypes.float32)
  t5885 = prims.convert_element_type(t5889, dtypes.bfloat16)
  t5888 = prims.mul(t5883, t5892)
  t5873 = prims.reshape(t5885, (8192, 5632, ))
  t5882 = prims.convert_element_type(t5888, dtypes.bfloat16)
  return (t5885, t5873, t5882, )
