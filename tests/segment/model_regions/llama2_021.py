# llama2 step (2026-12-06, NVIDIA H100 80GB HBM3), region viewfuse172 and the regions of its form: 5 kernel(s)
# layout t6517: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t1876: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t_model_layers_0_attention_norm_weight: sizes [2048] strides [1] offset 0
# layout t1797: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout t1836: sizes [4, 2048, 1] strides [2048, 1, 1] offset 0
# layout t2145: sizes [4, 2048, 2048] strides [4194304, 2048, 1] offset 0
# layout idx: sizes [4, 2048] strides [2048, 1] offset 0
def idx(t6517, t1876, t_model_layers_0_attention_norm_weight, t1797, t1836, t2145, idx):
  # t6517: "cpu bf16[4, 2048, 2048]"
  # t1876: "cpu bf16[4, 2048, 2048]"
  # t_model_layers_0_attention_norm_weight: "cpu bf16[2048]"
  # t1797: "cpu bf16[4, 2048, 2048]"
  # t1836: "cpu f32[4, 2048, 1]"
  # t2145: "cpu bf16[4, 2048, 2048]"
  # idx: "cpu i64[4, 2048]"
  t6518 = prims.convert_element_type(t6517, dtypes.float32)
  t6519 = prims.convert_element_type(t1876, dtypes.float32)
  t6520 = prims.add(t6518, t6519)
  t6521 = prims.convert_element_type(t6520, dtypes.bfloat16)
  t1854 = prims.broadcast_in_dim(t_model_layers_0_attention_norm_weight, (4, 2048, 2048, ), (2, ))
  t1871 = prims.convert_element_type(t6521, dtypes.float32)
  t1862 = prims.convert_element_type(t1854, dtypes.float32)
  t1867 = prims.mul(t1862, t1871)
  t1861 = prims.convert_element_type(t1867, dtypes.bfloat16)
  t1853 = prims.convert_element_type(t1861, dtypes.float32)
  t1803 = prims.convert_element_type(t1797, dtypes.float32)
  t1850 = prims.mul(t1803, t1853)
  t1843 = prims.reshape(t1850, (4, 2048, 2048, ))
  t1844 = prims.sum(t1843, (2, ))
  t1845 = prims.reshape(t1844, (4, 2048, ))
  t1846 = prims.broadcast_in_dim(t1845, [4, 2048, 1], [0, 1])
  t1839 = prims.pow(t1836, 3.0)
  t1838 = prims.mul(-0.5, t1846)
  t1840 = prims.mul(t1838, t1839)
  t1827 = prims.div(t1840, 2048.0)
  t1822 = prims.reshape(t1827, (4, 2048, 1, ))
  t1823 = prims.sum(t1822, (2, ))
  t1824 = prims.reshape(t1823, (4, 2048, ))
  t1818 = prims.broadcast_in_dim(t1824, [4, 2048, 1], [0, 1])
  t1819 = prims.broadcast_in_dim(t1818, (4, 2048, 2048, ), (0, 1, 2, ))
  t1841 = prims.broadcast_in_dim(t1836, (4, 2048, 2048, ), (0, 1, 2, ))
  t1810 = prims.pow(t1803, 1.0)
  t1809 = prims.mul(t1819, 2.0)
  t1847 = prims.mul(t1803, t1841)
  t1811 = prims.mul(t1809, t1810)
  t1849 = prims.mul(t1841, t1853)
  t1851 = prims.convert_element_type(t1847, dtypes.bfloat16)
  t6522 = prims.add(t1849, t1811)
  t1859 = prims.convert_element_type(t1851, dtypes.float32)
  t1805 = prims.convert_element_type(t6522, dtypes.bfloat16)
  t1868 = prims.mul(t1859, t1871)
  t6523 = prims.convert_element_type(t2145, dtypes.float32)
  t6524 = prims.convert_element_type(t1805, dtypes.float32)
  t6525 = prims.add(t6523, t6524)
  t6526 = prims.convert_element_type(t6525, dtypes.bfloat16)
  t1864 = prims.convert_element_type(t1868, dtypes.bfloat16)
  t1796 = prims.embedding_backward(t6526, idx, 32000, -1, False, False)
  t1856 = prims.convert_element_type(t1864, dtypes.float32)
  t1857 = prims.sum(t1856, (0, 1, ))
  t1858 = prims.convert_element_type(t1857, dtypes.bfloat16)
  return (t1858, t1796, )
