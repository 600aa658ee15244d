# llama2 step (Thunder 0.2.6 trace captured on the CPU, contiguous inputs; 2 layers of the benchmark's config), region viewfuse17 and 0 more of its form
def viewfuse17(t1652, t1883, t1691):
  # t1652: "cpu bf16[8192, 32000]"
  # t1883: "cpu bf16[8192, 32000]"
  # t1691: "cpu bf16[4, 2048, 32000]"
  t1654 = prims.convert_element_type(t1652, dtypes.float32)
  t1655 = prims.exp(t1654)
  t1656 = prims.convert_element_type(t1655, dtypes.bfloat16)
  t1657 = prims.convert_element_type(t1883, dtypes.float32)
  t1658 = prims.sum(t1657, (1, ))
  t1659 = prims.broadcast_in_dim(t1658, [8192, 1], [0])
  t1660 = prims.convert_element_type(t1659, dtypes.bfloat16)
  t1661 = prims.broadcast_in_dim(t1660, (8192, 32000, ), (0, 1, ))
  t1662 = prims.convert_element_type(t1656, dtypes.float32)
  t1663 = prims.convert_element_type(t1661, dtypes.float32)
  t1664 = prims.mul(t1662, t1663)
  t1665 = prims.convert_element_type(t1664, dtypes.bfloat16)
  t1666 = prims.convert_element_type(t1883, dtypes.float32)
  t1667 = prims.convert_element_type(t1665, dtypes.float32)
  t1668 = prims.sub(t1666, t1667)
  t1669 = prims.convert_element_type(t1668, dtypes.bfloat16)
  t1670 = prims.reshape(t1669, (8192, 32000, ))
  t1632 = prims.reshape(t1670, (4, 2048, 32000, ))
  t1692 = prims.convert_element_type(t1691, dtypes.float32)
  t1693 = prims.convert_element_type(t1632, dtypes.float32)
  t1694 = prims.add(t1692, t1693)
  t1695 = prims.convert_element_type(t1694, dtypes.bfloat16)
  t1623 = prims.reshape(t1695, (8192, 32000, ))
  return (t1695, t1623, )
