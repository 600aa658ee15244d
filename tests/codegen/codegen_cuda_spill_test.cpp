// Register spills of the CUDA kernels of the benchmark cases (bench/gpu_cases.py, at their sizes),
// from ptxas's report through NVRTC for sm_90: compile only, no GPU needed. A schedule change that
// makes one of them spill more fails here on the CPU machine instead of showing up, much later, as
// a slower benchmark on the H200. The allowances are what NVRTC 13.0 reports for the current
// schedules; lower one when a change removes a spill.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <regex>
#include <string>

#include "codegen/generate_kernel.h"
#include "codegen_test_util.h"
#include "frontend/trace_reader.h"
#include "ir/ir.h"
#include "runtime/nvrtc_compiler.h"
#include "segment/plan_fusion.h"
#include "test_support.h"

namespace vf {
namespace {

// Bytes of spill stores ptxas reports for the one kernel of `f`.
int64_t spill_store_bytes(const Fusion& f) {
  const Plan plan = plan_fusion(f, contiguous_input_layouts(f), {});
  const Segment* kernel = nullptr;
  for (const Segment& s : plan.segments)
    if (s.kind == SegmentKind::Kernel) {
      EXPECT_EQ(kernel, nullptr) << "more than one kernel";
      kernel = &s;
    }
  if (kernel == nullptr) {
    ADD_FAILURE() << "no kernel";
    return -1;
  }
  const GeneratedKernel k = generate_kernel(kernel->spec, Target::Cuda);
  NvrtcOptions options;
  options.ptxas_report = true;
  const CompiledCuda compiled = nvrtc_compile(k.source, "spills", 9, 0, options);
  const int64_t bytes = test::ptxas_spill_store_bytes(compiled.log);
  if (bytes < 0) ADD_FAILURE() << "no spill report in NVRTC's log:\n" << compiled.log;
  return bytes;
}

using test::constant;
Value* to(Fusion& f, Value* v, DType dtype) { return f.add(OpKind::ConvertElementType, {v}, CastAttrs{dtype}); }
Value* op(Fusion& f, OpKind kind, Value* a, Value* b) { return f.add(kind, {a, b}); }

// 0.5 a (1 + tanh(sqrt(2 / pi) (a + 0.044715 a^3))), as the benchmark traces spell it.
Value* gelu_tanh(Fusion& f, Value* a) {
  Value* cube = op(f, OpKind::Mul, op(f, OpKind::Mul, a, a), a);
  Value* inner = op(f, OpKind::Mul, constant(f, 0.7978845608028654),
                    op(f, OpKind::Add, a, op(f, OpKind::Mul, constant(f, 0.044715), cube)));
  return op(f, OpKind::Mul, op(f, OpKind::Mul, constant(f, 0.5), a),
            op(f, OpKind::Add, constant(f, 1.0), f.add(OpKind::Tanh, {inner})));
}

// Normalizations over rows of 4096 bf16, computed in float32.
void norm(Fusion& f, bool rms, bool residual) {
  const Shape s{16384, 4096};
  auto row = [&](Value* v) { return f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{s, {0}}); };
  auto weight = [&](const char* name) {
    return f.add(OpKind::BroadcastInDim, {to(f, f.add_tensor_input(name, DType::BFloat16, {4096}), DType::Float32)},
                 BroadcastAttrs{s, {1}});
  };
  Value* x = f.add_tensor_input("x", DType::BFloat16, s);
  if (residual) {
    x = op(f, OpKind::Add, x, f.add_tensor_input("h", DType::BFloat16, s));
    f.add_output(x);
  }
  Value* xf = to(f, x, DType::Float32);
  Value* y = nullptr;
  if (rms) {
    Value* ms = op(f, OpKind::Div, f.add(OpKind::Sum, {op(f, OpKind::Mul, xf, xf)}, DimsAttrs{{1}}), constant(f, 4096));
    y = op(f, OpKind::Mul, xf, row(f.add(OpKind::Rsqrt, {op(f, OpKind::Add, ms, constant(f, 1e-6))})));
    y = op(f, OpKind::Mul, y, weight("w"));
  } else {
    auto vm = f.add_node(OpKind::VarMean, {xf}, VarAttrs{{1}, 0});
    Value* r = f.add(OpKind::Rsqrt, {op(f, OpKind::Add, vm[0], constant(f, 1e-5))});
    y = op(f, OpKind::Mul, op(f, OpKind::Sub, xf, row(vm[1])), row(r));
    y = op(f, OpKind::Add, op(f, OpKind::Mul, y, weight("w")), weight("b"));
  }
  f.add_output(to(f, y, DType::BFloat16));
}

void causal_softmax(Fusion& f) {
  const Shape s{8, 32, 2048, 2048};
  auto row = [&](Value* v) { return f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{s, {0, 1, 2}}); };
  Value* x = f.add_tensor_input("s", DType::Float32, s);
  Value* i = f.add(OpKind::Iota, {}, IotaAttrs{2048, 0, 1, DType::Int64});
  Value* mask = op(f, OpKind::Ge, f.add(OpKind::BroadcastInDim, {i}, BroadcastAttrs{{2048, 2048}, {0}}),
                   f.add(OpKind::BroadcastInDim, {i}, BroadcastAttrs{{2048, 2048}, {1}}));
  Value* masked = f.add(OpKind::Where, {f.add(OpKind::BroadcastInDim, {mask}, BroadcastAttrs{s, {2, 3}}), x,
                                        constant(f, -std::numeric_limits<double>::infinity())});
  Value* e = f.add(OpKind::Exp, {op(f, OpKind::Sub, masked, row(f.add(OpKind::Amax, {masked}, DimsAttrs{{3}})))});
  f.add_output(to(f, op(f, OpKind::Div, e, row(f.add(OpKind::Sum, {e}, DimsAttrs{{3}}))), DType::BFloat16));
}

// merge heads: [16, 32, 2048, 128] -> [16, 2048, 4096], after a scale (producer) or before a gelu
// (consumer).
void merge_heads(Fusion& f, bool consumer) {
  Value* x = f.add_tensor_input("x", DType::BFloat16, {16, 32, 2048, 128});
  if (!consumer) x = op(f, OpKind::Add, op(f, OpKind::Mul, x, constant(f, 0.125)), constant(f, 1.0));
  Value* merged = f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}})},
                        ReshapeAttrs{{16, 2048, 4096}});
  f.add_output(consumer ? to(f, gelu_tanh(f, to(f, merged, DType::Float32)), DType::BFloat16) : merged);
}

void bias_gelu(Fusion& f) {
  const Shape s{16384, 4096};
  Value* b = f.add(OpKind::BroadcastInDim, {f.add_tensor_input("b", DType::BFloat16, {4096})}, BroadcastAttrs{s, {1}});
  Value* h = op(f, OpKind::Add, f.add_tensor_input("x", DType::BFloat16, s), b);
  f.add_output(to(f, gelu_tanh(f, to(f, h, DType::Float32)), DType::BFloat16));
}

// Llama RoPE of q and k, sliced from qkv [8, 2048, 3 * 32 * 128]: rotate half by slice, neg, cat.
void llama_rope(Fusion& f) {
  const int64_t B = 8, T = 2048, H = 32, D = 128;
  const Shape bhtd{B, H, T, D};
  Value* qkv = f.add(OpKind::Reshape, {f.add_tensor_input("qkv", DType::BFloat16, {B, T, 3 * H * D})},
                     ReshapeAttrs{{B, T, 3, H, D}});
  auto table = [&](const char* name) {
    return f.add(OpKind::BroadcastInDim, {to(f, f.add_tensor_input(name, DType::BFloat16, {T, D}), DType::Float32)},
                 BroadcastAttrs{bhtd, {2, 3}});
  };
  Value* cos = table("cos");
  Value* sin = table("sin");
  for (int64_t part : {0, 1}) {
    Value* s = f.add(OpKind::SlicePrim, {qkv}, SliceAttrs{{0, 0, part, 0, 0}, {B, T, part + 1, H, D}, {1, 1, 1, 1, 1}});
    Value* x = f.add(OpKind::Transpose, {f.add(OpKind::Squeeze, {s}, DimsAttrs{{2}})}, PermuteAttrs{{0, 2, 1, 3}});
    Value* lo = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0, 0}, {B, H, T, D / 2}, {1, 1, 1, 1}});
    Value* hi = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0, D / 2}, {B, H, T, D}, {1, 1, 1, 1}});
    Value* rot = f.add(OpKind::Cat, {f.add(OpKind::Neg, {hi}), lo}, AxisAttrs{3});
    Value* y = op(f, OpKind::Add, op(f, OpKind::Mul, to(f, x, DType::Float32), cos),
                  op(f, OpKind::Mul, to(f, rot, DType::Float32), sin));
    f.add_output(to(f, y, DType::BFloat16));
  }
}

// The tiled schedule (a transpose) and the flat one (an elementwise chain).
void transpose_add(Fusion& f) {
  Value* a = f.add_tensor_input("a", DType::Float32, {8192, 8192});
  f.add_output(op(f, OpKind::Add, f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}),
                  f.add_tensor_input("b", DType::Float32, {8192, 8192})));
}

void chain(Fusion& f) {
  Value* x = f.add_tensor_input("x", DType::Float32, {int64_t{1} << 28});
  Value* t = op(f, OpKind::Add, op(f, OpKind::Mul, x, constant(f, 2.0)), constant(f, 1.0));
  f.add_output(op(f, OpKind::Sub, op(f, OpKind::Mul, t, x), constant(f, 0.5)));
}

struct SpillCase {
  const char* name;
  std::function<void(Fusion&)> build;
  int64_t allowed_bytes;
};

// Every compile reaches ptxas (test_support.h turn_nvrtc_cache_off).
const bool kNvrtcCacheOff = test::turn_nvrtc_cache_off();

TEST(CudaSpills, BenchmarkKernels_AtMostRecorded) {
  ASSERT_TRUE(kNvrtcCacheOff) << "could not set CUDA_CACHE_DISABLE";
  VF_TEST_REQUIRE_NVRTC();
  const SpillCase cases[] = {
      {"layer_norm", [](Fusion& f) { norm(f, false, false); }, 0},
      {"rms_norm", [](Fusion& f) { norm(f, true, false); }, 0},
      {"add_layer_norm", [](Fusion& f) { norm(f, false, true); }, 0},
      {"causal_softmax", causal_softmax, 0},
      {"merge_heads_producer", [](Fusion& f) { merge_heads(f, false); }, 0},
      {"merge_heads_consumer", [](Fusion& f) { merge_heads(f, true); }, 0},
      {"bias_gelu_tanh", bias_gelu, 0},
      {"llama_rope", llama_rope, 0},
      {"transpose2d_add", transpose_add, 0},
      {"elementwise_chain", chain, 0},
  };
  for (const SpillCase& c : cases) {
    Fusion f;
    c.build(f);
    const int64_t bytes = spill_store_bytes(f);
    std::printf("%-22s %lld bytes of spill stores\n", c.name, static_cast<long long>(bytes));
    EXPECT_LE(bytes, c.allowed_bytes) << c.name;
  }
}

// nanoGPT's layer norm backward with its weight's and bias's column sums (tests/segment/
// model_regions/nanogpt_012.py, rows of 768 bf16) under warp rows (schedule "warp-rows"): its
// first kernel fits 128 registers with no spill. With its input preloaded it spilled 48 bytes, with
// its column sums in registers 404.
TEST(CudaSpills, WarpRowsNormBackward_None) {
  ASSERT_TRUE(kNvrtcCacheOff) << "could not set CUDA_CACHE_DISABLE";
  VF_TEST_REQUIRE_NVRTC();
  const test::ScopedEnv env("VF_DISABLE_SCHEDULES", "");
  const Fusion f = read_trace_file(std::string(VF_SOURCE_DIR) + "/tests/segment/model_regions/nanogpt_012.py");
  const Plan plan = plan_fusion(f, contiguous_input_layouts(f), {});
  ASSERT_EQ(plan.segments[0].kind, SegmentKind::Kernel);
  const GeneratedKernel k = generate_kernel(plan.segments[0].spec, Target::Cuda);
  ASSERT_NE(k.source.find("const int warp = threadIdx.x / 32;"), std::string::npos) << "not warp rows";
  NvrtcOptions options;
  options.ptxas_report = true;
  const CompiledCuda compiled = nvrtc_compile(k.source, "warp_rows", 9, 0, options);
  EXPECT_EQ(test::ptxas_spill_store_bytes(compiled.log), 0) << compiled.log;
}

}  // namespace
}  // namespace vf
