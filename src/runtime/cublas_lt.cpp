// cuBLASLt through dlopen: the few types and constants used are declared here with the values of
// cublasLt.h, cublas_api.h and library_types.h (CUDA 12 and 13).
#include "runtime/cublas_lt.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/error.h"

namespace vf {
namespace {

using Status = int;       // cublasStatus_t
using Handle = void*;     // cublasLtHandle_t
using Desc = void*;       // cublasLtMatmulDesc_t
using MatrixLayout = void*;  // cublasLtMatrixLayout_t
using Preference = void*;    // cublasLtMatmulPreference_t
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {  // cublasLtMatmulHeuristicResult_t
  Algo algo;
  size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

constexpr Status kSuccess = 0;
constexpr int kComputeF32 = 68, kComputeF64 = 70;                      // CUBLAS_COMPUTE_32F, _64F
constexpr int kR16F = 2, kR16BF = 14, kR32F = 0, kR64F = 1;            // cudaDataType_t
constexpr int kOpN = 0, kOpT = 1;                                      // CUBLAS_OP_N, CUBLAS_OP_T
constexpr int kDescTransA = 3, kDescTransB = 4;                        // CUBLASLT_MATMUL_DESC_TRANSA, _TRANSB
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;           // CUBLASLT_MATRIX_LAYOUT_*
constexpr int kPrefMaxWorkspace = 1;                                   // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

struct Api {
  Status (*create)(Handle*) = nullptr;
  Status (*desc_create)(Desc*, int compute, int scale) = nullptr;
  Status (*desc_destroy)(Desc) = nullptr;
  Status (*desc_set)(Desc, int attr, const void* value, size_t bytes) = nullptr;
  Status (*layout_create)(MatrixLayout*, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  Status (*layout_destroy)(MatrixLayout) = nullptr;
  Status (*layout_set)(MatrixLayout, int attr, const void* value, size_t bytes) = nullptr;
  Status (*pref_create)(Preference*) = nullptr;
  Status (*pref_destroy)(Preference) = nullptr;
  Status (*pref_set)(Preference, int attr, const void* value, size_t bytes) = nullptr;
  Status (*heuristic)(Handle, Desc, MatrixLayout, MatrixLayout, MatrixLayout, MatrixLayout, Preference, int,
                      HeuristicResult*, int*) = nullptr;
  Status (*matmul)(Handle, Desc, const void*, const void*, MatrixLayout, const void*, MatrixLayout, const void*,
                   const void*, MatrixLayout, void*, MatrixLayout, const Algo*, void*, size_t, CUstream) = nullptr;
  const char* (*status_name)(Status) = nullptr;
};

struct Loaded {
  Api api;
  std::string path, error;
  Handle handle = nullptr;
  CUdeviceptr workspace = 0;
  std::mutex mutex;  // one call at a time on the shared handle and workspace
};

Loaded& loaded() {
  static Loaded* l = [] {
    auto* out = new Loaded;  // lives for the process, as the library it holds
    std::vector<std::string> names;
    if (const char* path = std::getenv("VF_CUBLASLT_PATH"); path && *path) {
      names.push_back(path);
    } else {
      names = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so"};
    }
    std::string tried;
    for (const std::string& name : names) {
      void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        const char* e = dlerror();
        tried += detail::concat(tried.empty() ? "" : "; ", name, ": ", e ? e : "not found");
        continue;
      }
      Api& a = out->api;
      std::string missing;
      dl_resolve(lib, "cublasLtCreate", a.create, missing);
      dl_resolve(lib, "cublasLtMatmulDescCreate", a.desc_create, missing);
      dl_resolve(lib, "cublasLtMatmulDescDestroy", a.desc_destroy, missing);
      dl_resolve(lib, "cublasLtMatmulDescSetAttribute", a.desc_set, missing);
      dl_resolve(lib, "cublasLtMatrixLayoutCreate", a.layout_create, missing);
      dl_resolve(lib, "cublasLtMatrixLayoutDestroy", a.layout_destroy, missing);
      dl_resolve(lib, "cublasLtMatrixLayoutSetAttribute", a.layout_set, missing);
      dl_resolve(lib, "cublasLtMatmulPreferenceCreate", a.pref_create, missing);
      dl_resolve(lib, "cublasLtMatmulPreferenceDestroy", a.pref_destroy, missing);
      dl_resolve(lib, "cublasLtMatmulPreferenceSetAttribute", a.pref_set, missing);
      dl_resolve(lib, "cublasLtMatmulAlgoGetHeuristic", a.heuristic, missing);
      dl_resolve(lib, "cublasLtMatmul", a.matmul, missing);
      std::string optional;
      dl_resolve(lib, "cublasLtGetStatusName", a.status_name, optional);
      if (!missing.empty()) {
        tried += detail::concat(tried.empty() ? "" : "; ", name, " lacks ", missing);
        dlclose(lib);
        continue;
      }
      out->path = name;
      return out;
    }
    out->error = "cuBLASLt could not be loaded (" + tried + ")";
    return out;
  }();
  return *l;
}

void check(Status s, const char* call) {
  if (s == kSuccess) return;
  const Api& a = loaded().api;
  const char* name = a.status_name ? a.status_name(s) : nullptr;
  throw DeviceError(detail::concat(call, " failed: ", name ? name : "status", " (", s, ")"));
}

int data_type(DType d) {
  switch (d) {
    case DType::Float16: return kR16F;
    case DType::BFloat16: return kR16BF;
    case DType::Float32: return kR32F;
    case DType::Float64: return kR64F;
    default: throw DeviceError(detail::concat("cuBLASLt matmul of ", dtype_short_name(d), ": not a floating dtype"));
  }
}

// A column-major layout of `rows` x `cols` with leading dimension ld, batched when count > 1.
struct LayoutGuard {
  MatrixLayout l = nullptr;
  LayoutGuard(int type, int64_t rows, int64_t cols, int64_t ld, int32_t count, int64_t stride) {
    const Api& a = loaded().api;
    check(a.layout_create(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
          "cublasLtMatrixLayoutCreate");
    if (count > 1) {
      check(a.layout_set(l, kLayoutBatchCount, &count, sizeof count), "cublasLtMatrixLayoutSetAttribute");
      check(a.layout_set(l, kLayoutBatchStride, &stride, sizeof stride), "cublasLtMatrixLayoutSetAttribute");
    }
  }
  ~LayoutGuard() {
    if (l) loaded().api.layout_destroy(l);
  }
  LayoutGuard(const LayoutGuard&) = delete;
  LayoutGuard& operator=(const LayoutGuard&) = delete;
};

}  // namespace

bool cublaslt_available() { return loaded().error.empty(); }
std::string cublaslt_problem() { return loaded().error; }

void cublaslt_matmul(const StridedGemm& g, DType dtype, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d, CUstream stream) {
  Loaded& lib = loaded();
  if (!lib.error.empty()) throw DeviceError(lib.error);
  const Api& api = lib.api;
  const int64_t elem = static_cast<int64_t>(dtype_size(dtype));
  int64_t calls = 1;
  for (size_t j = 0; j + 1 < g.batch.size(); ++j) calls *= g.batch[j];
  const int32_t count = g.batch.empty() ? 1 : static_cast<int32_t>(g.batch.back());
  if (g.m == 0 || g.n == 0 || calls == 0 || count == 0) return;
  const CudaDriverApi& cu = cuda_driver_api();
  if (g.k == 0) {  // an empty sum: zeros (d is row-major and its batches laid out by g.d)
    for (int64_t c = 0; c < calls * count; ++c) {
      int64_t off = g.d.offset, rest = c;
      for (size_t j = g.batch.size(); j-- > 0;) {
        off += (rest % g.batch[j]) * g.d.batch[j];
        rest /= g.batch[j];
      }
      for (int64_t r = 0; r < g.m; ++r)
        cuda_check(cu.cuMemsetD8Async(d + static_cast<CUdeviceptr>((off + r * g.d.rs) * elem), 0,
                                      static_cast<size_t>(g.n * elem), stream),
                   "cuMemsetD8Async");
    }
    return;
  }
  std::lock_guard<std::mutex> one_call(lib.mutex);
  if (!lib.handle) {
    check(api.create(&lib.handle), "cublasLtCreate");
    cuda_check(cu.cuMemAlloc(&lib.workspace, kWorkspaceBytes), "cuMemAlloc (cuBLASLt workspace)");
  }
  // Column-major, D^T = B^T A^T: cuBLASLt's A is B^T (N x K), its B is A^T (K x M), its D is D^T.
  const int type = data_type(dtype);
  const bool b_rows = g.b.cs == 1, a_rows = g.a.cs == 1;
  const int op_a = b_rows ? kOpN : kOpT, op_b = a_rows ? kOpN : kOpT;
  const int64_t stride_b = g.batch.empty() ? 0 : g.b.batch.back();
  const int64_t stride_a = g.batch.empty() ? 0 : g.a.batch.back();
  const int64_t stride_d = g.batch.empty() ? 0 : g.d.batch.back();
  LayoutGuard lt_a(type, b_rows ? g.n : g.k, b_rows ? g.k : g.n, b_rows ? g.b.rs : g.b.cs, count, stride_b);
  LayoutGuard lt_b(type, a_rows ? g.k : g.m, a_rows ? g.m : g.k, a_rows ? g.a.rs : g.a.cs, count, stride_a);
  LayoutGuard lt_d(type, g.n, g.m, g.d.rs, count, stride_d);
  const bool f64 = dtype == DType::Float64;
  Desc desc = nullptr;
  check(api.desc_create(&desc, f64 ? kComputeF64 : kComputeF32, f64 ? kR64F : kR32F), "cublasLtMatmulDescCreate");
  struct DescGuard {
    Desc d;
    ~DescGuard() { loaded().api.desc_destroy(d); }
  } desc_guard{desc};
  check(api.desc_set(desc, kDescTransA, &op_a, sizeof op_a), "cublasLtMatmulDescSetAttribute");
  check(api.desc_set(desc, kDescTransB, &op_b, sizeof op_b), "cublasLtMatmulDescSetAttribute");
  Preference pref = nullptr;
  check(api.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  struct PrefGuard {
    Preference p;
    ~PrefGuard() { loaded().api.pref_destroy(p); }
  } pref_guard{pref};
  const uint64_t workspace = kWorkspaceBytes;
  check(api.pref_set(pref, kPrefMaxWorkspace, &workspace, sizeof workspace), "cublasLtMatmulPreferenceSetAttribute");
  HeuristicResult result{};
  int found = 0;
  check(api.heuristic(lib.handle, desc, lt_a.l, lt_b.l, lt_d.l, lt_d.l, pref, 1, &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw DeviceError(detail::concat("cuBLASLt has no algorithm for ", g.m, " x ", g.k, " @ ", g.k, " x ", g.n, " in ",
                                     dtype_short_name(dtype)));
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  for (int64_t c = 0; c < calls; ++c) {
    int64_t oa = g.a.offset, ob = g.b.offset, od = g.d.offset, rest = c;
    for (size_t j = g.batch.empty() ? 0 : g.batch.size() - 1; j-- > 0;) {  // all but the last batch dim
      const int64_t i = rest % g.batch[j];
      rest /= g.batch[j];
      oa += i * g.a.batch[j];
      ob += i * g.b.batch[j];
      od += i * g.d.batch[j];
    }
    auto at = [&](CUdeviceptr base, int64_t offset) {
      return reinterpret_cast<const void*>(base + static_cast<CUdeviceptr>(offset * elem));
    };
    void* dd = const_cast<void*>(at(d, od));
    check(api.matmul(lib.handle, desc, alpha, at(b, ob), lt_a.l, at(a, oa), lt_b.l, beta, dd, lt_d.l, dd, lt_d.l,
                     &result.algo, reinterpret_cast<void*>(lib.workspace), kWorkspaceBytes, stream),
          "cublasLtMatmul");
  }
}

}  // namespace vf
