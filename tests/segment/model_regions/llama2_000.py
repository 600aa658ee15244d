# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse0 and the regions of its form: 1 kernel(s)
# layout idx: sizes [4, 2048] strides [2048, 1] offset 0
# layout t_model_tok_embeddings_weight: sizes [32000, 2048] strides [2048, 1] offset 0
# layout t_model_freqs_cos: sizes [2048, 64] strides [64, 1] offset 0
# layout t_model_freqs_sin: sizes [2048, 64] strides [64, 1] offset 0
# layout t_model_layers_0_attention_norm_weight: sizes [2048] strides [1] offset 0
def t_model_layers_0_attention_norm_weight(idx, t_model_tok_embeddings_weight, t_model_freqs_cos, t_model_freqs_sin, t_model_layers_0_attention_norm_weight):
  # idx: "cpu i64[4, 2048]"
  # t_model_tok_embeddings_weight: "cpu bf16[32000, 2048]"
  # t_model_freqs_cos: "cpu bf16[2048, 64]"
  # t_model_freqs_sin: "cpu bf16[2048, 64]"
  # t_model_layers_0_attention_norm_weight: "cpu bf16[2048]"
  t1792 = prims.reshape(idx, (8192, ))
  t1793 = prims.take(t_model_tok_embeddings_weight, t1792, 0)
  t1794 = prims.reshape(t1793, (4, 2048, 2048, ))
  t1797 = prims.reshape(t1794, (4, 2048, 2048, ))
  t1799 = prims.reshape(t_model_freqs_cos, (2048, 64, ))
  t1801 = prims.reshape(t_model_freqs_sin, (2048, 64, ))
  t1803 = prims.convert_element_type(t1797, dtypes.float32)
  t1806 = prims.pow(t1803, 2.0)
  t1814 = prims.reshape(t1806, (4, 2048, 2048, ))
  t1816 = prims.sum(t1814, (2, ))
  t1820 = prims.broadcast_in_dim(t1816, [4, 2048, 1], [0, 1])
  t1825 = prims.div(t1820, 2048.0)
  t1832 = prims.reshape(t1825, (4, 2048, 1, ))
  t1834 = prims.add(t1832, 1e-05)
  t1836 = prims.rsqrt(t1834)
  t1841 = prims.broadcast_in_dim(t1836, (4, 2048, 2048, ), (0, 1, 2, ))
  t1847 = prims.mul(t1803, t1841)
  t1851 = prims.convert_element_type(t1847, dtypes.bfloat16)
  t1854 = prims.broadcast_in_dim(t_model_layers_0_attention_norm_weight, (4, 2048, 2048, ), (2, ))
  t1859 = prims.convert_element_type(t1851, dtypes.float32)
  t1862 = prims.convert_element_type(t1854, dtypes.float32)
  t1865 = prims.mul(t1859, t1862)
  t1869 = prims.convert_element_type(t1865, dtypes.bfloat16)
  return (t1797, t1799, t1801, t1836, t1869, )
