list(APPEND VF_SOURCES runtime/cuda_api.cpp runtime/cublas_lt.cpp runtime/cuda_device.cpp runtime/cuda_memory.cpp runtime/cuda_kernel.cpp
     runtime/cuda_kernel_cache.cpp runtime/nvrtc_compiler.cpp runtime/disk_cache.cpp runtime/cuda_backend.cpp
     runtime/specializer.cpp)
list(APPEND VF_SOURCES runtime/cpu_backend.cpp)
list(APPEND VF_SOURCES runtime/tensor.cpp runtime/backend.cpp runtime/executor.cpp)  # the executor (lead)
list(APPEND VF_SOURCES runtime/repro.cpp)  # repro files for internal errors (robustness)
