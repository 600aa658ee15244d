list(APPEND VF_SOURCES layout/layout.cpp layout/view_algebra.cpp layout/index_map.cpp layout/host_tensor.cpp layout/strided_gemm.cpp)
