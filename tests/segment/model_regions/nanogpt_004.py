# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse4 and 3 more of its form
def viewfuse4(t1635, t526, t_model_transformer_h_0_ln_2_weight, t_model_transformer_h_0_ln_2_bias):
  # t1635: "cpu bf16[8, 1024, 768]"
  # t526: "cpu bf16[8, 1024, 768]"
  # t_model_transformer_h_0_ln_2_weight: "cpu bf16[768]"
  # t_model_transformer_h_0_ln_2_bias: "cpu bf16[768]"
  t693 = prims.reshape(t1635, (8, 1024, 768, ))
  t695 = prims.convert_element_type(t526, dtypes.float32)
  t698 = prims.convert_element_type(t693, dtypes.float32)
  t701 = prims.add(t695, t698)
  t703 = prims.convert_element_type(t701, dtypes.bfloat16)
  t706 = prims.convert_element_type(t703, dtypes.float32)
  t709 = prims.reshape(t706, (8, 1024, 768, ))
  (t713, t714) = prims.var_mean(t709, (2, ), correction=0)
  t729 = prims.broadcast_in_dim(t713, [8, 1024, 1], [0, 1])
  t734 = prims.broadcast_in_dim(t714, [8, 1024, 1], [0, 1])
  t739 = prims.reshape(t729, (8, 1024, 1, ))
  t741 = prims.reshape(t734, (8, 1024, 1, ))
  t743 = prims.add(t739, 1e-05)
  t745 = prims.rsqrt(t743)
  t750 = prims.broadcast_in_dim(t741, (8, 1024, 768, ), (0, 1, 2, ))
  t756 = prims.convert_element_type(t703, dtypes.float32)
  t759 = prims.sub(t756, t750)
  t762 = prims.broadcast_in_dim(t745, (8, 1024, 768, ), (0, 1, 2, ))
  t768 = prims.mul(t759, t762)
  t772 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_2_weight, (8, 1024, 768, ), (2, ))
  t777 = prims.convert_element_type(t772, dtypes.float32)
  t780 = prims.mul(t768, t777)
  t784 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_2_bias, (8, 1024, 768, ), (2, ))
  t789 = prims.convert_element_type(t784, dtypes.float32)
  t792 = prims.add(t780, t789)
  t794 = prims.convert_element_type(t792, dtypes.bfloat16)
  return (t703, t714, t745, t794, )
