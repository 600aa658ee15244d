// cuBLASLt's matmul for the library segments on CUDA, loaded at run time with dlopen (as the driver
// and NVRTC are), so the library builds and runs without it.
#pragma once

#include <memory>
#include <optional>
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

// What the call adds to the sum S = A @ B, and does to it, before D is written.
struct GemmEpilogue {
  std::optional<int64_t> addend;  // S + C, C laid out as D: the offset of its first element in its buffer
  std::optional<int64_t> bias;    // + bias along the columns: the offset of its first element in its buffer
  bool gelu = false;              // D = the tanh gelu of that
  bool aux = false;               // with gelu: S (+ bias) is written too, to a buffer laid out as D's
};

// The buffers of one run, each at its element 0 (0 where the call has none).
struct GemmPointers {
  CUdeviceptr a = 0, b = 0, addend = 0, bias = 0, d = 0, aux = 0;
};

// One matmul's cuBLASLt call, made ready once (in a prepared plan): its matrix layouts, descriptor
// and algorithm, so that a run only sets pointers and enqueues. D = epilogue(A @ B [+ C]) for the GEMMs
// of `g` in `dtype` (f16, bf16, f32 or f64: float32 accumulation for the 16-bit types, each output
// rounded once; f32 without TF32; gelu not for f64). The algorithm is the
// heuristic's first for operands aligned as g's offsets allow on a 256-byte-aligned buffer; a run
// whose pointers are less aligned asks the heuristic again for them (and keeps that answer).
// Thread-safe: runs take turns on the shared handle.
class CublasLtMatmul {
 public:
  // Throws DeviceError when cuBLASLt cannot be loaded or has no algorithm. The driver's context
  // must be current. An aux output needs g.d's row stride a multiple of 8 (cuBLASLt's rule).
  CublasLtMatmul(const StridedGemm& g, DType dtype, const GemmEpilogue& epilogue);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  // Enqueues the GEMMs on `stream` (null: the default stream); g's offsets, the addend's and the
  // bias's are added here. Each stream gets a workspace of its own. Throws DeviceError.
  void run(const GemmPointers& p, CUstream stream) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace vf
