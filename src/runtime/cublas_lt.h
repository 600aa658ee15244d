// cuBLASLt's matmul for the library segments on CUDA, loaded at run time with dlopen (as the driver
// and NVRTC are), so the library builds and runs without it.
#pragma once

#include <string>

#include "base/dtype.h"
#include "layout/strided_gemm.h"
#include "runtime/cuda_api.h"

namespace vf {

// Whether cuBLASLt can be loaded: $VF_CUBLASLT_PATH alone when set, else libcublasLt.so.13,
// libcublasLt.so.12, libcublasLt.so and the toolkit's lib64 folder. Never throws.
bool cublaslt_available();
// Why it cannot ("" when it can).
std::string cublaslt_problem();

// D = A @ B for the GEMMs of `g` in `dtype` (f16, bf16, f32 or f64: float32 accumulation for the
// 16-bit types, rounded once; f32 without TF32), enqueued on `stream` (null: the default stream).
// a, b and d point at element 0 of their buffers (g's offsets are added here). The driver's
// context must be current. Throws DeviceError.
void cublaslt_matmul(const StridedGemm& g, DType dtype, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d, CUstream stream);

}  // namespace vf
