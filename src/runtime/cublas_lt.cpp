// cuBLASLt through dlopen: the few types and constants used are declared here with the values of
// cublasLt.h, cublas_api.h and library_types.h (CUDA 12 and 13).
#include "runtime/cublas_lt.h"

#include <dlfcn.h>

#include <algorithm>
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
constexpr int kDescEpilogue = 7, kDescBiasPointer = 8;                 // CUBLASLT_MATMUL_DESC_*
constexpr int kDescAuxPointer = 11, kDescAuxLd = 12, kDescAuxBatchStride = 13;  // ..._EPILOGUE_AUX_*
constexpr uint32_t kEpilogueBias = 4, kEpilogueGelu = 32, kEpilogueAux = 128;    // CUBLASLT_EPILOGUE_* bits
constexpr int kPrefMaxWorkspace = 1;                                   // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr int kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7, kPrefAlignD = 8;  // ..._MIN_ALIGNMENT_*_BYTES
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
  std::vector<std::pair<CUstream, CUdeviceptr>> workspaces;  // one per stream, so none is shared by two streams
  std::mutex mutex;  // one call at a time on the shared handle (and on a matmul's descriptor)
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

// The handle, made on first use; call with the mutex held.
Handle handle_locked(Loaded& lib) {
  if (!lib.handle) check(lib.api.create(&lib.handle), "cublasLtCreate");
  return lib.handle;
}

// The workspace of `stream`, made on its first use; call with the mutex held.
CUdeviceptr workspace_locked(Loaded& lib, CUstream stream) {
  for (const auto& [s, w] : lib.workspaces)
    if (s == stream) return w;
  CUdeviceptr w = 0;
  cuda_check(cuda_driver_api().cuMemAlloc(&w, kWorkspaceBytes), "cuMemAlloc (cuBLASLt workspace)");
  lib.workspaces.emplace_back(stream, w);
  return w;
}

// The alignment in bytes (a power of two, at most 256) of every matrix an operand's calls start
// at, for a buffer at `base`: the calls of the batch dims before the last step by their strides.
uint32_t alignment(CUdeviceptr base, const GemmOperand& op, int64_t elem) {
  uint64_t bits = (base + static_cast<uint64_t>(op.offset * elem)) | 256;
  for (size_t j = 0; j + 1 < op.batch.size(); ++j) bits |= static_cast<uint64_t>(op.batch[j] * elem);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

}  // namespace

bool cublaslt_available() { return loaded().error.empty(); }
std::string cublaslt_problem() { return loaded().error; }

struct CublasLtMatmul::State {
  StridedGemm g;
  bool f64 = false, addend = false, bias = false, aux = false;
  int64_t elem = 0, calls = 1, addend_offset = 0, bias_offset = 0;
  const char* epilogue_name = "";  // for errors: " then gelu", " then gelu (and aux)"
  std::unique_ptr<LayoutGuard> a, b, d;  // cuBLASLt's A (our B^T), B (our A^T) and D (our D^T)
  Desc desc = nullptr;
  // The algorithm and the alignments of our a, b and d it was chosen for (a run with less aligned
  // pointers replaces both, under the mutex).
  mutable Algo algo{};
  mutable uint32_t align_a = 0, align_b = 0, align_d = 0;

  ~State() {
    if (desc) loaded().api.desc_destroy(desc);
  }

  // Asks the heuristic for operands aligned to (aa, ab, ad) bytes; call with the mutex held.
  void choose(Loaded& lib, uint32_t aa, uint32_t ab, uint32_t ad) const {
    const Api& api = lib.api;
    Preference pref = nullptr;
    check(api.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
    struct PrefGuard {
      Preference p;
      ~PrefGuard() { loaded().api.pref_destroy(p); }
    } pref_guard{pref};
    const uint64_t workspace = kWorkspaceBytes;
    check(api.pref_set(pref, kPrefMaxWorkspace, &workspace, sizeof workspace), "cublasLtMatmulPreferenceSetAttribute");
    // cuBLASLt's A is our b, its B our a; C and D are our d.
    for (auto [attr, bytes] : {std::pair{kPrefAlignA, ab}, {kPrefAlignB, aa}, {kPrefAlignC, ad}, {kPrefAlignD, ad}})
      check(api.pref_set(pref, attr, &bytes, sizeof bytes), "cublasLtMatmulPreferenceSetAttribute");
    HeuristicResult result{};
    int found = 0;
    check(api.heuristic(handle_locked(lib), desc, a->l, b->l, d->l, d->l, pref, 1, &result, &found),
          "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0)
      throw DeviceError(detail::concat("cuBLASLt has no algorithm for ", g.m, " x ", g.k, " @ ", g.k, " x ", g.n,
                                       bias ? " + bias" : "", epilogue_name, " with operands aligned to ", aa, ", ",
                                       ab, " and ", ad, " bytes"));
    algo = result.algo;
    align_a = aa;
    align_b = ab;
    align_d = ad;
  }
};

CublasLtMatmul::CublasLtMatmul(const StridedGemm& g, DType dtype, const GemmEpilogue& epilogue)
    : state_(std::make_unique<State>()) {
  Loaded& lib = loaded();
  if (!lib.error.empty()) throw DeviceError(lib.error);
  const Api& api = lib.api;
  State& s = *state_;
  s.g = g;
  s.addend = epilogue.addend.has_value();
  s.addend_offset = epilogue.addend.value_or(0);
  s.bias = epilogue.bias.has_value();
  s.bias_offset = epilogue.bias.value_or(0);
  s.aux = epilogue.gelu && epilogue.aux;
  s.epilogue_name = epilogue.gelu ? (s.aux ? " then gelu (and aux)" : " then gelu") : s.addend ? " + C" : "";
  s.f64 = dtype == DType::Float64;
  VF_INTERNAL_CHECK(!epilogue.gelu || !s.f64, "cuBLASLt matmul: a gelu epilogue of f64");
  VF_INTERNAL_CHECK(!s.aux || g.d.rs % 8 == 0, "cuBLASLt matmul: an aux output of row stride ", g.d.rs,
                    " (a multiple of 8 is needed)");
  s.elem = static_cast<int64_t>(dtype_size(dtype));
  for (size_t j = 0; j + 1 < g.batch.size(); ++j) s.calls *= g.batch[j];
  const int32_t count = g.batch.empty() ? 1 : static_cast<int32_t>(g.batch.back());
  if (g.m == 0 || g.n == 0 || g.k == 0 || s.calls == 0 || count == 0) return;  // run writes zeros or nothing
  // Column-major, D^T = B^T A^T: cuBLASLt's A is B^T (N x K), its B is A^T (K x M), its D is D^T.
  const int type = data_type(dtype);
  const bool b_rows = g.b.cs == 1, a_rows = g.a.cs == 1;
  const int op_a = b_rows ? kOpN : kOpT, op_b = a_rows ? kOpN : kOpT;
  auto last = [&](const GemmOperand& o) { return g.batch.empty() ? int64_t{0} : o.batch.back(); };
  s.a = std::make_unique<LayoutGuard>(type, b_rows ? g.n : g.k, b_rows ? g.k : g.n, b_rows ? g.b.rs : g.b.cs, count,
                                      last(g.b));
  s.b = std::make_unique<LayoutGuard>(type, a_rows ? g.k : g.m, a_rows ? g.m : g.k, a_rows ? g.a.rs : g.a.cs, count,
                                      last(g.a));
  s.d = std::make_unique<LayoutGuard>(type, g.n, g.m, g.d.rs, count, last(g.d));
  check(api.desc_create(&s.desc, s.f64 ? kComputeF64 : kComputeF32, s.f64 ? kR64F : kR32F),
        "cublasLtMatmulDescCreate");
  check(api.desc_set(s.desc, kDescTransA, &op_a, sizeof op_a), "cublasLtMatmulDescSetAttribute");
  check(api.desc_set(s.desc, kDescTransB, &op_b, sizeof op_b), "cublasLtMatmulDescSetAttribute");
  // One bias vector of N elements for every batch (its batch stride stays 0); the aux output is
  // laid out as D (its pointer is set per call).
  const uint32_t bits = (s.bias ? kEpilogueBias : 0) | (epilogue.gelu ? kEpilogueGelu : 0) | (s.aux ? kEpilogueAux : 0);
  if (bits != 0)
    check(api.desc_set(s.desc, kDescEpilogue, &bits, sizeof bits), "cublasLtMatmulDescSetAttribute");
  if (s.aux) {
    const int64_t ld = g.d.rs, stride = last(g.d);
    check(api.desc_set(s.desc, kDescAuxLd, &ld, sizeof ld), "cublasLtMatmulDescSetAttribute");
    if (count > 1) check(api.desc_set(s.desc, kDescAuxBatchStride, &stride, sizeof stride), "cublasLtMatmulDescSetAttribute");
  }
  std::lock_guard<std::mutex> one_call(lib.mutex);
  s.choose(lib, alignment(0, g.a, s.elem), alignment(0, g.b, s.elem), alignment(0, g.d, s.elem));
}

CublasLtMatmul::~CublasLtMatmul() = default;

void CublasLtMatmul::run(const GemmPointers& p, CUstream stream) const {
  const State& s = *state_;
  const StridedGemm& g = s.g;
  const int64_t elem = s.elem;
  const int32_t count = g.batch.empty() ? 1 : static_cast<int32_t>(g.batch.back());
  if (g.m == 0 || g.n == 0 || s.calls == 0 || count == 0) return;
  if (g.k == 0) {  // an empty sum: zeros (d is row-major and its batches laid out by g.d)
    VF_INTERNAL_CHECK(!s.bias && !*s.epilogue_name, "cuBLASLt matmul: an empty K with an epilogue is computed on the host");
    const CudaDriverApi& cu = cuda_driver_api();
    for (int64_t c = 0; c < s.calls * count; ++c) {  // (an addend with K = 0 is computed on the host)
      int64_t off = g.d.offset, rest = c;
      for (size_t j = g.batch.size(); j-- > 0;) {
        off += (rest % g.batch[j]) * g.d.batch[j];
        rest /= g.batch[j];
      }
      for (int64_t r = 0; r < g.m; ++r)
        cuda_check(cu.cuMemsetD8Async(p.d + static_cast<CUdeviceptr>((off + r * g.d.rs) * elem), 0,
                                      static_cast<size_t>(g.n * elem), stream),
                   "cuMemsetD8Async");
    }
    return;
  }
  Loaded& lib = loaded();
  const Api& api = lib.api;
  std::lock_guard<std::mutex> one_call(lib.mutex);
  GemmOperand c_operand = g.d;  // C: laid out as D, from its own offset
  c_operand.offset = s.addend_offset;
  const uint32_t aa = alignment(p.a, g.a, elem), ab = alignment(p.b, g.b, elem),
                 ad = std::min({alignment(p.d, g.d, elem), s.aux ? alignment(p.aux, g.d, elem) : 256u,
                                s.addend ? alignment(p.addend, c_operand, elem) : 256u});
  if (aa < s.align_a || ab < s.align_b || ad < s.align_d)
    s.choose(lib, std::min(aa, s.align_a), std::min(ab, s.align_b), std::min(ad, s.align_d));
  if (s.bias) {
    const CUdeviceptr first = p.bias + static_cast<CUdeviceptr>(s.bias_offset * elem);
    check(api.desc_set(s.desc, kDescBiasPointer, &first, sizeof first), "cublasLtMatmulDescSetAttribute");
  }
  const CUdeviceptr workspace = workspace_locked(lib, stream);
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* alpha = s.f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = s.addend ? alpha : s.f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  for (int64_t c = 0; c < s.calls; ++c) {
    int64_t oa = g.a.offset, ob = g.b.offset, od = g.d.offset, rest = c;
    for (size_t j = g.batch.empty() ? 0 : g.batch.size() - 1; j-- > 0;) {  // all but the last batch dim
      const int64_t i = rest % g.batch[j];
      rest /= g.batch[j];
      oa += i * g.a.batch[j];
      ob += i * g.b.batch[j];
      od += i * g.d.batch[j];
    }
    auto at = [&](CUdeviceptr base, int64_t offset) {
      return reinterpret_cast<void*>(base + static_cast<CUdeviceptr>(offset * elem));
    };
    if (s.aux) {
      const void* aux_at = at(p.aux, od);
      check(api.desc_set(s.desc, kDescAuxPointer, &aux_at, sizeof aux_at), "cublasLtMatmulDescSetAttribute");
    }
    const void* c_at = s.addend ? at(p.addend, od - g.d.offset + s.addend_offset) : at(p.d, od);
    check(api.matmul(handle_locked(lib), s.desc, alpha, at(p.b, ob), s.a->l, at(p.a, oa), s.b->l, beta, c_at, s.d->l,
                     at(p.d, od), s.d->l, &s.algo, reinterpret_cast<void*>(workspace), kWorkspaceBytes, stream),
          "cublasLtMatmul");
  }
}

}  // namespace vf
