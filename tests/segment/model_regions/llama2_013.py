# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse58 and the regions of its form: 2 kernel(s)
# layout t5875: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5825: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t_model_layers_7_ffn_norm_weight: sizes [2048] strides [1] offset 0
# layout t5749: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t5785: sizes [4, 2048, 1] strides [2048, 1, 1] offset 0
# layout t5906: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
def t5906(t5875, t5825, t_model_layers_7_ffn_norm_weight, t5749, t5785, t5906):
  # t5875: "cpu bf16[4, 2048, 2048]"
  # t5825: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_7_ffn_norm_weight: "cpu bf16[2048]"
  # t5749: "cpu bf16[4, 2048, 2048]"
  # t5785: "cpu f32[4, 2048, 1]"
  # t5906: "cpu bf16[4, 2048, 2048]"
  t6055 = prims.convert_element_type(t5875, dtypes.float32)
  t6056 = prims.convert_element_type(t5825, dtypes.float32)
  t6057 = prims.add(t6055, t6056)
  t6058 = prims.convert_element_type(t6057, dtypes.bfloat16)
  t5803 = prims.broadcast_in_dim(t_model_layers_7_ffn_norm_weight, (4, 2048, 2048, ), (2, ))
  t5820 = prims.convert_element_type(t6058, dtypes.float32)
  t5811 = prims.convert_element_type(t5803, dtypes.float32)
  t5816 = prims.mul(t5811, t5820)
  t5810 = prims.convert_element_type(t5816, dtypes.bfloat16)
  t5802 = prims.convert_element_type(t5810, dtypes.float32)
  t5752 = prims.convert_element_type(t5749, dtypes.float32)
  t5799 = prims.mul(t5752, t5802)
  t5792 = prims.reshape(t5799, (4, 2048, 2048, ))
  t5793 = prims.sum(t5792, (2, ))
  t5794 = prims.reshape(t5793, (4, 2048, ))
  t5795 = prims.broadcast_in_dim(t5794, [4, 2048, 1], [0, 1])
  t5788 = prims.pow(t5785, 3.0)
  t5787 = prims.mul(-0.5, t5795)
  t5789 = prims.mul(t5787, t5788)
  t5776 = prims.div(t5789, 2048.0)
  t5771 = prims.reshape(t5776, (4, 2048, 1, ))
  t5772 = prims.sum(t5771, (2, ))
  t5773 = prims.reshape(t5772, (4, 2048, ))
  t5767 = prims.broadcast_in_dim(t5773, [4, 2048, 1], [0, 1])
  t5768 = prims.broadcast_in_dim(t5767, (4, 2048, 2048, ), (0, 1, 2, ))
  t5759 = prims.pow(t5752, 1.0)
  t5758 = prims.mul(t5768, 2.0)
  t5790 = prims.broadcast_in_dim(t5785, (4, 2048, 2048, ), (0, 1, 2, ))
  t5760 = prims.mul(t5758, t5759)
  t5798 = prims.mul(t5790, t5802)
  t6059 = prims.add(t5798, t5760)
  t5796 = prims.mul(t5752, t5790)
  t5754 = prims.convert_element_type(t6059, dtypes.bfloat16)
  t5800 = prims.convert_element_type(t5796, dtypes.bfloat16)
  t6060 = prims.convert_element_type(t5906, dtypes.float32)
  t6061 = prims.convert_element_type(t5754, dtypes.float32)
  t6062 = prims.add(t6060, t6061)
  t6063 = prims.convert_element_type(t6062, dtypes.bfloat16)
  t5808 = prims.convert_element_type(t5800, dtypes.float32)
  t5751 = prims.convert_element_type(t6063, dtypes.float32)
  t5817 = prims.mul(t5808, t5820)
  t5746 = prims.convert_element_type(t5751, dtypes.bfloat16)
  t5813 = prims.convert_element_type(t5817, dtypes.bfloat16)
  t5732 = prims.reshape(t5746, (8192, 2048, ))
  t5743 = prims.convert_element_type(t5751, dtypes.bfloat16)
  t5805 = prims.convert_element_type(t5813, dtypes.float32)
  t5806 = prims.sum(t5805, (0, 1, ))
  t5807 = prims.convert_element_type(t5806, dtypes.bfloat16)
  return (t5746, t5732, t5743, t5807, )
