# nanogpt step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse0 and 0 more of its form
def viewfuse0(t1632, t1631, t_model_transformer_h_0_ln_1_weight, t_model_transformer_h_0_ln_1_bias):
  # t1632: "cpu bf16[1024, 768]"
  # t1631: "cpu bf16[8, 1024, 768]"
  # t_model_transformer_h_0_ln_1_weight: "cpu bf16[768]"
  # t_model_transformer_h_0_ln_1_bias: "cpu bf16[768]"
  t510 = prims.broadcast_in_dim(t1632, (8, 1024, 768, ), (1, 2, ))
  t515 = prims.convert_element_type(t1631, dtypes.float32)
  t518 = prims.convert_element_type(t510, dtypes.float32)
  t521 = prims.add(t515, t518)
  t523 = prims.convert_element_type(t521, dtypes.bfloat16)
  t526 = prims.reshape(t523, (8, 1024, 768, ))
  t528 = prims.convert_element_type(t526, dtypes.float32)
  t531 = prims.reshape(t528, (8, 1024, 768, ))
  (t535, t536) = prims.var_mean(t531, (2, ), correction=0)
  t551 = prims.broadcast_in_dim(t535, [8, 1024, 1], [0, 1])
  t556 = prims.broadcast_in_dim(t536, [8, 1024, 1], [0, 1])
  t561 = prims.reshape(t551, (8, 1024, 1, ))
  t563 = prims.reshape(t556, (8, 1024, 1, ))
  t565 = prims.add(t561, 1e-05)
  t567 = prims.rsqrt(t565)
  t572 = prims.broadcast_in_dim(t563, (8, 1024, 768, ), (0, 1, 2, ))
  t578 = prims.convert_element_type(t526, dtypes.float32)
  t581 = prims.sub(t578, t572)
  t584 = prims.broadcast_in_dim(t567, (8, 1024, 768, ), (0, 1, 2, ))
  t590 = prims.mul(t581, t584)
  t594 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_1_weight, (8, 1024, 768, ), (2, ))
  t599 = prims.convert_element_type(t594, dtypes.float32)
  t602 = prims.mul(t590, t599)
  t606 = prims.broadcast_in_dim(t_model_transformer_h_0_ln_1_bias, (8, 1024, 768, ), (2, ))
  t611 = prims.convert_element_type(t606, dtypes.float32)
  t614 = prims.add(t602, t611)
  t616 = prims.convert_element_type(t614, dtypes.bfloat16)
  return (t526, t536, t567, t616, )
