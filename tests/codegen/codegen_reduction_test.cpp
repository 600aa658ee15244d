// Reduction kernels against the reference executor: every reduction op, dtype, reduced-dims set and
// input layout at awkward extents; fused normalizations with one kernel; segments the planner
// splits. Each test runs on the CPU backend and, where there is a GPU, on the CUDA backend (same
// oracle); on the CPU run, every generated CUDA kernel is also compiled with NVRTC.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "codegen/generate_kernel.h"
#include "codegen/lower_kernel.h"
#include "backend_test.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"
#include "runtime/cuda_backend.h"
#include "runtime/executor.h"
#include "ir/print_trace.h"
#include "runtime/nvrtc_compiler.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

// An input of `shape` with a chosen kind of layout, filled from `seed`.
enum class InputLayout { Contiguous, Transposed, Expanded, Offset, Misaligned };

HostTensor make_input(DType dtype, const Shape& shape, InputLayout kind, uint64_t seed) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (kind == InputLayout::Contiguous || rank == 0) return random_tensor(dtype, shape, seed);
  if (kind == InputLayout::Transposed) {  // storage holds the reversed shape
    Shape reversed(shape.rbegin(), shape.rend());
    HostTensor base = random_tensor(dtype, reversed, seed);
    Layout l = Layout::contiguous(reversed);
    std::reverse(l.sizes.begin(), l.sizes.end());
    std::reverse(l.strides.begin(), l.strides.end());
    return HostTensor::view_of(dtype, l, base.storage());
  }
  if (kind == InputLayout::Expanded) {  // the last dim has stride 0
    Shape one = shape;
    one.back() = 1;
    HostTensor base = random_tensor(dtype, one, seed);
    Layout l = Layout::contiguous(one);
    l.sizes.back() = shape.back();
    l.strides.back() = 0;
    return HostTensor::view_of(dtype, l, base.storage());
  }
  if (kind == InputLayout::Misaligned) {  // one element in: no row starts on a 16-byte boundary
    HostTensor base = random_tensor(dtype, {shape_numel(shape) + 1}, seed);
    Layout l = Layout::contiguous(shape);
    l.offset = 1;
    return HostTensor::view_of(dtype, l, base.storage());
  }
  Shape bigger = shape;  // Offset: rows 1.. of a tensor one row taller
  bigger.front() += 1;
  HostTensor base = random_tensor(dtype, bigger, seed);
  Layout l = Layout::contiguous(shape);
  l.offset = shape_numel(shape) / std::max<int64_t>(shape.front(), 1);
  return HostTensor::view_of(dtype, l, base.storage());
}

class ReductionKernels : public test::BackendTest {
 protected:
  // The fused patterns of REFERENCE.md over rows of shape s: each one kernel.
  void check_fused_normalizations(const Shape& s);
};

// One reduction node (var_mean adds both outputs).
std::shared_ptr<Fusion> one_reduction(OpKind op, DType dtype, const Shape& shape, std::vector<int64_t> dims,
                                      double correction = 1) {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", dtype, shape);
  if (op == OpKind::Var || op == OpKind::VarMean) {
    for (Value* v : f->add_node(op, {x}, VarAttrs{std::move(dims), correction})) f->add_output(v);
  } else {
    f->add_output(f->add(op, {x}, DimsAttrs{std::move(dims)}));
  }
  return f;
}

// Row lengths 1, odd, prime, 2^k - 1, 2^k + 1, long, and empty; 1 and 3 rows, and no rows. Lengths
// that 8 divides take CUDA's 16-byte packs: one group per thread, groups past the row's end, and
// long rows (kept in registers by teams of 64 to 1024 threads).
const std::vector<Shape> kRowShapes = {{3, 1},    {3, 7},    {1, 13},   {3, 31},   {3, 33}, {2, 1023},
                                       {2, 1025}, {2, 4099}, {3, 0},    {0, 5},    {3, 8},  {5, 264},
                                       {2, 4096}, {3, 4104}, {2, 16384}};

TEST_P(ReductionKernels, EveryOpAndDtype_InnermostDim_MatchesReference) {
  const std::vector<std::pair<OpKind, std::vector<DType>>> cases = {
      {OpKind::Sum, {DType::Float32, DType::BFloat16, DType::Float16, DType::Float64, DType::Int32, DType::Int8}},
      {OpKind::Prod, {DType::Float32, DType::Int64}},
      {OpKind::Amax, {DType::Float32, DType::BFloat16, DType::Int16, DType::Bool}},
      {OpKind::Amin, {DType::Float64, DType::UInt8, DType::Bool}},
      {OpKind::Var, {DType::Float32, DType::BFloat16}},
      {OpKind::VarMean, {DType::Float32, DType::Float16, DType::Float64}},
  };
  uint64_t seed = 1;
  for (const auto& [op, dtypes] : cases) {
    for (DType dtype : dtypes) {
      for (const Shape& shape : kRowShapes) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + std::string(dtype_short_name(dtype)) + shape_to_string(shape));
        check(one_reduction(op, dtype, shape, {1}), {random_tensor(dtype, shape, seed++)}, shape[1]);
      }
    }
  }
}

TEST_P(ReductionKernels, VarCorrection_ZeroOneAndLargerThanCount) {
  for (double correction : {0.0, 1.0, 2.5, 9.0}) {
    const Shape shape{4, 9};
    SCOPED_TRACE("correction " + std::to_string(correction));
    check(one_reduction(OpKind::VarMean, DType::Float32, shape, {1}, correction),
          {random_tensor(DType::Float32, shape, 7)}, 9);
  }
}

TEST_P(ReductionKernels, ReducedDimsSets_OuterMiddleSeveralAllNone) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{37, 5}, {0}}, {{3, 5, 7}, {1}}, {{3, 5, 7}, {0, 2}}, {{6, 11}, {0, 1}}, {{4, 3}, {}}, {{2, 0, 3}, {1}},
      {{2, 3, 4, 5}, {1, 3}}, {{7, 33000}, {0}} /* many rows, outer dim: a CUDA thread per row */};
  uint64_t seed = 100;
  for (OpKind op : {OpKind::Sum, OpKind::Amax, OpKind::VarMean}) {
    for (const auto& [shape, dims] : cases) {
      SCOPED_TRACE(std::string(op_name(op)) + shape_to_string(shape) + " dims " + shape_to_string(dims));
      int64_t terms = 1;
      for (int64_t d : dims) terms *= shape[d];
      check(one_reduction(op, DType::Float32, shape, dims), {random_tensor(DType::Float32, shape, seed++)}, terms);
    }
  }
}

// Outer dims reduced to 0 .. 1000 rows, with and without CUDA's sliced nests (tiles of 32 rows,
// warps splitting the elements; ReductionSchedule::slices, schedule_enabled("sliced")): a
// last tile of fewer rows, 1 to 32 slices, several reduced dims, integer and NaN-propagating
// reductions, var_mean's two phases.
TEST_P(ReductionKernels, OuterDimsOfFewRows_SlicedMatchReference) {
  for (const char* disabled : {"", "sliced"}) {
    const test::ScopedEnv env("VF_DISABLE_SCHEDULES", disabled);
    const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
        {{512, 768}, {0}}, {{8, 64, 100}, {0, 1}}, {{3, 37}, {0}}, {{40, 33}, {0}}, {{1000, 65}, {0}}, {{0, 40}, {0}}};
    uint64_t seed = 300;
    for (const auto& [op, dtype] : std::vector<std::pair<OpKind, DType>>{{OpKind::Sum, DType::Float32},
                                                                         {OpKind::Sum, DType::BFloat16},
                                                                         {OpKind::Sum, DType::Int32},
                                                                         {OpKind::Amax, DType::Float32},
                                                                         {OpKind::VarMean, DType::Float64}}) {
      for (const auto& [shape, dims] : cases) {
        SCOPED_TRACE(std::string("disabled: ") + disabled + " " + std::string(op_name(op)) + " " +
                     std::string(dtype_short_name(dtype)) + shape_to_string(shape));
        HostTensor x = random_tensor(dtype, shape, seed++);
        if (op == OpKind::Amax && shape_numel(shape) > 70) {  // a NaN in column 70 % cols
          std::vector<double> v = test::values(x);
          v[70] = std::numeric_limits<double>::quiet_NaN();
          test::fill(x, [&](int64_t k) { return v[k]; });
        }
        int64_t terms = 1;
        for (int64_t d : dims) terms *= shape[d];
        check(one_reduction(op, dtype, shape, dims), {x}, terms);
      }
    }
  }
}

TEST_P(ReductionKernels, InputLayouts_TransposedExpandedOffsetMisaligned) {
  uint64_t seed = 200;
  for (InputLayout kind :
       {InputLayout::Transposed, InputLayout::Expanded, InputLayout::Offset, InputLayout::Misaligned}) {
    for (const auto& [shape, dims] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{5, 33}, {1}}, {{5, 33}, {0}}, {{4, 6, 7}, {0, 2}}, {{5, 64}, {1}}, {{3, 8, 16}, {1, 2}}}) {
      SCOPED_TRACE("layout " + std::to_string(static_cast<int>(kind)) + shape_to_string(shape));
      for (OpKind op : {OpKind::Sum, OpKind::VarMean}) {
        check(one_reduction(op, DType::BFloat16, shape, dims), {make_input(DType::BFloat16, shape, kind, seed++)},
              shape_numel(shape));
      }
    }
  }
}

// The fused patterns of REFERENCE.md: each one kernel, with prologue and epilogue inside.
TEST_P(ReductionKernels, FusedNormalizations_OneKernelMatchReference) {
  for (const Shape& s : {Shape{6, 257}, Shape{6, 256}})  // odd rows; rows of 16-byte packs on CUDA
    check_fused_normalizations(s);
}

// CUDA's teams with one group of a row a thread ("deep" off: schedule_cuda.cpp choose_team) and
// with four, on rows of 2,048 (Llama's RMS norm width: a team of 256 against 64).
TEST_P(ReductionKernels, FusedNormalizations_DeepAndShallowTeamsMatchReference) {
  for (const char* disabled : {"", "deep"}) {
    SCOPED_TRACE(std::string("disabled: ") + disabled);
    const test::ScopedEnv env("VF_DISABLE_SCHEDULES", disabled);
    check_fused_normalizations(Shape{5, 2048});
  }
}

void ReductionKernels::check_fused_normalizations(const Shape& s) {
  const std::vector<int64_t> last{1};
  auto bcast = [&](Fusion& f, Value* row) { return f.add(OpKind::BroadcastInDim, {row}, BroadcastAttrs{s, {0}}); };
  auto c = [](Fusion& f, double v) { return f.add_constant(Scalar::from_float(v)); };
  std::vector<std::pair<std::string, std::function<void(Fusion&)>>> cases;
  cases.push_back({"softmax", [&](Fusion& f) {
                     Value* x = f.add_tensor_input("x", DType::BFloat16, s);
                     Value* xf = f.add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
                     Value* m = f.add(OpKind::Amax, {xf}, DimsAttrs{last});
                     Value* e = f.add(OpKind::Exp, {f.add(OpKind::Sub, {xf, bcast(f, m)})});
                     Value* z = f.add(OpKind::Sum, {e}, DimsAttrs{last});
                     f.add_output(f.add(OpKind::ConvertElementType, {f.add(OpKind::Div, {e, bcast(f, z)})},
                                        CastAttrs{DType::BFloat16}));
                   }});
  cases.push_back({"log_softmax and logsumexp", [&](Fusion& f) {
                     Value* x = f.add_tensor_input("x", DType::Float32, s);
                     Value* m = f.add(OpKind::Amax, {x}, DimsAttrs{last});
                     Value* sh = f.add(OpKind::Sub, {x, bcast(f, m)});
                     Value* lse = f.add(OpKind::Log, {f.add(OpKind::Sum, {f.add(OpKind::Exp, {sh})}, DimsAttrs{last})});
                     f.add_output(f.add(OpKind::Sub, {sh, bcast(f, lse)}));
                     f.add_output(f.add(OpKind::Add, {lse, m}));
                   }});
  cases.push_back({"layer_norm", [&](Fusion& f) {
                     Value* x = f.add_tensor_input("x", DType::Float32, s);
                     Value* w = f.add_tensor_input("w", DType::Float32, {s[1]});
                     auto vm = f.add_node(OpKind::VarMean, {x}, VarAttrs{last, 0});
                     Value* r = f.add(OpKind::Rsqrt, {f.add(OpKind::Add, {vm[0], c(f, 1e-5)})});
                     Value* y = f.add(OpKind::Mul, {f.add(OpKind::Sub, {x, bcast(f, vm[1])}), bcast(f, r)});
                     f.add_output(f.add(OpKind::Mul, {y, f.add(OpKind::BroadcastInDim, {w}, BroadcastAttrs{s, {1}})}));
                     f.add_output(vm[1]);
                     f.add_output(r);
                   }});
  cases.push_back({"add + rms_norm, residual and inverse rms out", [&](Fusion& f) {
                     Value* x = f.add_tensor_input("x", DType::BFloat16, s);
                     Value* h = f.add_tensor_input("h", DType::BFloat16, s);
                     Value* sum = f.add(OpKind::Add, {x, h});
                     Value* xf = f.add(OpKind::ConvertElementType, {sum}, CastAttrs{DType::Float32});
                     Value* ms = f.add(OpKind::Div, {f.add(OpKind::Sum, {f.add(OpKind::Mul, {xf, xf})}, DimsAttrs{last}),
                                                     c(f, static_cast<double>(s[1]))});
                     Value* inv = f.add(OpKind::Rsqrt, {f.add(OpKind::Add, {ms, c(f, 1e-6)})});
                     f.add_output(sum);
                     f.add_output(f.add(OpKind::ConvertElementType, {f.add(OpKind::Mul, {xf, bcast(f, inv)})},
                                        CastAttrs{DType::BFloat16}));
                     f.add_output(inv);
                   }});
  cases.push_back({"cross-entropy-like: logsumexp minus the target logit", [&](Fusion& f) {
                     Value* x = f.add_tensor_input("x", DType::Float32, s);
                     Value* target = f.add_tensor_input("target", DType::Int64, {s[0]});
                     Value* iota = f.add(OpKind::Iota, {}, IotaAttrs{s[1], 0, 1, DType::Int64});
                     Value* hit = f.add(OpKind::Eq, {f.add(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{s, {1}}),
                                                     bcast(f, target)});
                     Value* picked = f.add(OpKind::Sum, {f.add(OpKind::Where, {hit, x, c(f, 0.0)})}, DimsAttrs{last});
                     Value* m = f.add(OpKind::Amax, {x}, DimsAttrs{last});
                     Value* z = f.add(OpKind::Sum, {f.add(OpKind::Exp, {f.add(OpKind::Sub, {x, bcast(f, m)})})},
                                      DimsAttrs{last});
                     f.add_output(f.add(OpKind::Sub, {f.add(OpKind::Add, {f.add(OpKind::Log, {z}), m}), picked}));
                   }});
  uint64_t seed = 300;
  for (const auto& [name, build] : cases) {
    SCOPED_TRACE(name);
    auto f = std::make_shared<Fusion>();
    build(*f);
    const Plan plan = check(f, random_inputs(*f, seed++), s[1]);
    EXPECT_EQ(plan.kernel_count(), 1) << name;
  }
}

// A division by a row's result inside the row (softmax's) divides zeros through the divisor's
// reciprocal: a causal mask makes most dividends zero; rows summing to zero, to inf, to NaN and to
// a negative value give NaN, zeros and signed zeros as the reference does (the sign is checked).
TEST_P(ReductionKernels, DivisionByRowResult_ZeroDividendsAndSpecialDivisors) {
  for (const int64_t n : {256, 257}) {
    SCOPED_TRACE("rows of " + std::to_string(n));
    const Shape s{8, n};
    auto bcast = [&](Fusion& f, Value* row) { return f.add(OpKind::BroadcastInDim, {row}, BroadcastAttrs{s, {0}}); };
    auto f = std::make_shared<Fusion>();
    Value* x = f->add_tensor_input("x", DType::Float32, s);
    Value* iota = f->add(OpKind::Iota, {}, IotaAttrs{n, 0, 1, DType::Int64});
    Value* keep = f->add(OpKind::Ge, {f->add(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{s, {1}}),
                                      f->add_constant(Scalar::from_int(n / 2))});
    Value* masked = f->add(OpKind::Where, {keep, x, f->add_constant(Scalar::from_float(0.0))});
    f->add_output(f->add(OpKind::Div, {masked, bcast(*f, f->add(OpKind::Sum, {masked}, DimsAttrs{{1}}))}));
    HostTensor xt = random_tensor(DType::Float32, s, 71);
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> v = test::values(xt);
    for (int64_t k = 0; k < n; ++k) {
      v[0 * n + k] = 0.0;                                  // sum 0: every quotient NaN
      v[1 * n + k] = k == n - 1 ? inf : 1.0;               // sum inf: zeros, and inf / inf = NaN
      v[2 * n + k] = k == n - 2 ? nan : 2.0;               // sum NaN
      v[3 * n + k] = k % 2 ? -1.0 : -0.0;                  // negative sum: -0 / negative = +0
      v[4 * n + k] = k % 3 ? 3.0 : -0.0;                   // positive sum: -0 stays -0
    }
    test::fill(xt, [&](int64_t k) { return v[k]; });
    check(f, {xt}, n);
    // The signs of the zeros, which compare_tensors does not look at.
    CompiledFusion compiled(f, ExecutorOptions{.device = GetParam()}, backend_);
    const HostTensor out = host_copy(compiled.run({copy_to(to_tensor(xt), GetParam())})[0]);
    const HostTensor expected = run_reference(*f, {xt})[0];
    const std::vector<double> got = test::values(out), want = test::values(expected);
    for (size_t k = 0; k < got.size(); ++k)
      if (want[k] == 0.0) {
        ASSERT_EQ(std::signbit(got[k]), std::signbit(want[k])) << "element " << k;
      }
  }
}

// amax and amin propagate NaN wherever it sits in the row (CUDA combines them with the hardware's
// max.NaN / min.NaN), and keep infinities: rows with a NaN first, last or in the middle, with
// +-inf, all -inf, and signed zeros, in packed (aligned) rows and in the strided loop.
TEST_P(ReductionKernels, AmaxAminWithNaNAndInfinities_PropagateNaN) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const DType dtype : {DType::Float32, DType::BFloat16}) {
    for (const int64_t n : {256, 257}) {
      SCOPED_TRACE(std::string(dtype_short_name(dtype)) + ", rows of " + std::to_string(n));
      const Shape s{7, n};
      auto f = std::make_shared<Fusion>();
      Value* x = f->add_tensor_input("x", dtype, s);
      f->add_output(f->add(OpKind::Amax, {x}, DimsAttrs{{1}}));
      f->add_output(f->add(OpKind::Amin, {x}, DimsAttrs{{1}}));
      HostTensor xt = random_tensor(dtype, s, 75);
      std::vector<double> v = test::values(xt);
      v[0 * n + 0] = nan;                                   // NaN first
      v[1 * n + n - 1] = nan;                               // NaN last
      v[2 * n + n / 2] = nan;                               // NaN in the middle, beside infinities
      v[2 * n + 1] = inf;
      v[2 * n + 2] = -inf;
      v[3 * n + 3] = inf;                                   // +inf max, -inf min
      v[3 * n + 4] = -inf;
      for (int64_t k = 0; k < n; ++k) {
        v[4 * n + k] = -inf;                                // all -inf
        v[5 * n + k] = k % 2 ? 0.0 : -0.0;                  // signed zeros
      }
      v[6 * n + n - 2] = nan;                               // NaN in the last pack, before a value
      test::fill(xt, [&](int64_t k) { return v[k]; });
      check(f, {xt}, 1);
    }
  }
}

// A division by a row's value is IEEE division on both backends. CUDA's packed rows divide through
// the divisor's reciprocal with one correcting step (vf_div_r_fast) and divide again where an
// operand is outside the step's exact range: dividends over the whole float range (subnormal, tiny,
// huge, signed zeros, infinities, NaN) by row maxima of every magnitude give the reference's bits.
TEST_P(ReductionKernels, DivisionByRowMax_BitExactOverTheRange) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> divisors{1.0, 3.0, -3.0, 0x1.fffffep59, 0x1p61, 0x1p-60, 0x1.8p-61, 1e-40, 0.0, inf, 7.25};
  for (const int64_t n : {256, 260}) {
    SCOPED_TRACE("rows of " + std::to_string(n));
    const auto rows = static_cast<int64_t>(divisors.size());
    const Shape s{rows, n};
    auto f = std::make_shared<Fusion>();
    Value* x = f->add_tensor_input("x", DType::Float32, s);
    Value* z = f->add_tensor_input("z", DType::Float32, s);
    Value* max = f->add(OpKind::Amax, {z}, DimsAttrs{{1}});
    f->add_output(f->add(OpKind::Div, {x, f->add(OpKind::BroadcastInDim, {max}, BroadcastAttrs{s, {0}})}));
    HostTensor xt = HostTensor::empty(DType::Float32, s), zt = HostTensor::empty(DType::Float32, s);
    uint64_t state = 12345;
    test::fill(xt, [&](int64_t k) {
      const int64_t e = k % n;
      if (e < 5) return std::vector<double>{0.0, -0.0, inf, -inf, nan}[e];
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double mantissa = 1.0 + static_cast<double>(state >> 41) / 8388608.0;  // 23 random bits
      const double value = std::ldexp(mantissa, static_cast<int>(e % 277) - 149);   // 2^-149 .. 2^127
      return static_cast<double>(static_cast<float>(k % 2 ? -value : value));
    });
    test::fill(zt, [&](int64_t k) {
      const double b = divisors[static_cast<size_t>(k / n)];
      return k % n == 7 || b < 0 ? b : -1e30;  // the row's max is b
    });
    check(f, {xt, zt}, 1);
    if (GetParam() == Device::Cuda && n % 4 == 0) {
      const Plan plan = CompiledFusion(f, ExecutorOptions{.device = Device::Cuda}, backend_).plan_for(
          {copy_to(to_tensor(xt), Device::Cuda), copy_to(to_tensor(zt), Device::Cuda)});
      EXPECT_THAT(generate_kernel(plan.segments.at(0).spec, Target::Cuda).source, HasSubstr("vf_div_r_fast("));
    }
    CompiledFusion compiled(f, ExecutorOptions{.device = GetParam()}, backend_);
    const HostTensor out =
        host_copy(compiled.run({copy_to(to_tensor(xt), GetParam()), copy_to(to_tensor(zt), GetParam())})[0]);
    const std::vector<double> got = test::values(out), want = test::values(run_reference(*f, {xt, zt})[0]);
    for (size_t k = 0; k < got.size(); ++k) {
      if (std::isnan(want[k])) {
        ASSERT_TRUE(std::isnan(got[k])) << "element " << k << ": " << got[k];
      } else {
        ASSERT_EQ(got[k], want[k]) << "element " << k << ", row " << k / static_cast<size_t>(n);
        ASSERT_EQ(std::signbit(got[k]), std::signbit(want[k])) << "element " << k;
      }
    }
  }
}

// Few rows longer than a team keeps in registers are reduced in two stages (passes/split_reductions.h):
// whole-tensor sums, half types (float32 partials), reduced dims that are not innermost, and a
// softmax over long rows whose max and sum are both split, the epilogue reading their results.
// A causal mask built from iotas, where(i >= j, s, -inf) and where(j > i, -inf, s): the scores it
// discards are not read (their loads are guarded, packs read when any element is kept), the
// softmax matches the reference; s used unmasked too (s * 2) is still read in full.
TEST_P(ReductionKernels, CausalMaskedSoftmax_DiscardedScoresUnreadMatchReference) {
  for (const int64_t t : {1, 5, 37, 64, 260}) {
    for (const bool swapped : {false, true}) {
      SCOPED_TRACE("t " + std::to_string(t) + (swapped ? ", where(j > i, -inf, s)" : ", where(i >= j, s, -inf)"));
      const Shape s{2, 3, t, t};
      auto f = std::make_shared<Fusion>();
      Value* x = f->add_tensor_input("s", DType::Float32, s);
      Value* iota = f->add(OpKind::Iota, {}, IotaAttrs{t, 0, 1, DType::Int64});
      Value* i = f->add(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{{t, t}, {0}});
      Value* j = f->add(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{{t, t}, {1}});
      Value* ninf = f->add_constant(Scalar::from_float(-std::numeric_limits<double>::infinity()));
      Value* cond = swapped ? f->add(OpKind::Gt, {j, i}) : f->add(OpKind::Ge, {i, j});
      Value* mask = f->add(OpKind::BroadcastInDim, {cond}, BroadcastAttrs{s, {2, 3}});
      Value* m = swapped ? f->add(OpKind::Where, {mask, ninf, x}) : f->add(OpKind::Where, {mask, x, ninf});
      auto row = [&](Value* r) { return f->add(OpKind::BroadcastInDim, {r}, BroadcastAttrs{s, {0, 1, 2}}); };
      Value* e = f->add(OpKind::Exp, {f->add(OpKind::Sub, {m, row(f->add(OpKind::Amax, {m}, DimsAttrs{{3}}))})});
      f->add_output(f->add(OpKind::Div, {e, row(f->add(OpKind::Sum, {e}, DimsAttrs{{3}}))}));
      const int64_t outputs = swapped ? 2 : 1;
      if (swapped) f->add_output(f->add(OpKind::Mul, {x, f->add_constant(Scalar::from_float(2.0))}));
      const Plan plan = check(f, {random_tensor(DType::Float32, s, 73)}, t);
      ASSERT_EQ(plan.segments.size(), 1u);
      const KernelIR& ir = *plan.segments[0].kernel;  // lowered by the planner
      int guarded = 0, unguarded = 0;
      for (const ValueExpr& v : ir.nests.at(0).values) {
        guarded += v.op == ValueOp::Load && v.pred >= 0 && v.pred_in_bounds;
        unguarded += v.op == ValueOp::Load && v.pred < 0;
      }
      EXPECT_EQ(guarded, 1);
      EXPECT_EQ(unguarded, outputs - 1);  // the unmasked s * 2
      if (t % 4 == 0) {
        EXPECT_THAT(generate_kernel(plan.segments[0].spec, Target::Cuda).source, HasSubstr(" ? *(const vf_pack<float, 4>*)"));
      }
    }
  }
}

TEST_P(ReductionKernels, LongFewRows_SplitInTwoStagesMatchReference) {
  std::vector<std::pair<std::string, std::function<void(Fusion&)>>> cases;
  auto reduce = [&](OpKind op, DType dtype, Shape shape, std::vector<int64_t> dims) {
    return [=](Fusion& f) { f.add_output(f.add(op, {f.add_tensor_input("x", dtype, shape)}, DimsAttrs{dims})); };
  };
  cases.push_back({"sum of a vector", reduce(OpKind::Sum, DType::Float32, {int64_t{1} << 18}, {0})});
  cases.push_back({"amax of bf16 rows", reduce(OpKind::Amax, DType::BFloat16, {3, int64_t{1} << 16}, {1})});
  cases.push_back({"sum of bf16 rows", reduce(OpKind::Sum, DType::BFloat16, {2, int64_t{1} << 17}, {1})});
  cases.push_back({"amin over outer dims", reduce(OpKind::Amin, DType::Float32, {256, 3, 512}, {0, 2})});
  cases.push_back({"sum over the outer dim", reduce(OpKind::Sum, DType::Float32, {int64_t{1} << 16, 5}, {0})});
  auto variance = [&](OpKind op, DType dtype, Shape shape, std::vector<int64_t> dims, double correction) {
    return [=](Fusion& f) {
      for (Value* out : f.add_node(op, {f.add_tensor_input("x", dtype, shape)}, VarAttrs{dims, correction}))
        f.add_output(out);
    };
  };
  cases.push_back({"var of a vector", variance(OpKind::Var, DType::Float32, {int64_t{1} << 18}, {0}, 1)});
  cases.push_back({"var_mean of bf16 rows", variance(OpKind::VarMean, DType::BFloat16, {3, int64_t{1} << 16}, {1}, 0)});
  cases.push_back({"var_mean over outer dims", variance(OpKind::VarMean, DType::Float32, {256, 3, 512}, {0, 2}, 1)});
  cases.push_back({"softmax of long rows", [](Fusion& f) {
                     const Shape s{2, int64_t{1} << 17};
                     auto row = [&](Value* v) { return f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{s, {0}}); };
                     Value* x = f.add_tensor_input("x", DType::Float32, s);
                     Value* e = f.add(OpKind::Exp, {f.add(OpKind::Sub, {x, row(f.add(OpKind::Amax, {x}, DimsAttrs{{1}}))})});
                     f.add_output(f.add(OpKind::Div, {e, row(f.add(OpKind::Sum, {e}, DimsAttrs{{1}}))}));
                   }});
  uint64_t seed = 500;
  for (const auto& [name, build] : cases) {
    SCOPED_TRACE(name);
    auto f = std::make_shared<Fusion>();
    build(*f);
    int64_t terms = 1;  // (the second stage's tolerance: that of the whole reduction)
    for (const auto& n : f->nodes())
      if (op_category(n->op) == OpCategory::Reduction)
        terms = std::max(terms, n->inputs[0]->numel() / std::max<int64_t>(1, n->output()->numel()));
    const Plan plan = check(f, random_inputs(*f, seed++), terms);
    EXPECT_NE(plan.rewritten, nullptr);
    EXPECT_GE(plan.kernel_count(), 2);
  }
}

// nanoGPT's attention output: x + merge_heads(y), then layer norm. The row of y is split by the
// reshape into (head, head dim): on CUDA it moves in 16-byte packs when 8 divides the head dim
// (8 and 16), elementwise otherwise (12), and an input one element off takes the strided loop.
TEST_P(ReductionKernels, ReshapeSplitRow_MergeHeadsResidualLayerNorm) {
  uint64_t seed = 400;
  for (const int64_t hs : {8, 16, 12}) {
    for (const bool misaligned : {false, true}) {
      const int64_t B = 2, H = 3, T = 5, C = H * hs;
      SCOPED_TRACE("head dim " + std::to_string(hs) + (misaligned ? ", y one element off" : ""));
      auto f = std::make_shared<Fusion>();
      Value* y = f->add_tensor_input("y", DType::BFloat16, {B, H, T, hs});
      Value* x = f->add_tensor_input("x", DType::BFloat16, {B, T, C});
      Value* merged = f->add(OpKind::Reshape, {f->add(OpKind::Transpose, {y}, PermuteAttrs{{0, 2, 1, 3}})},
                             ReshapeAttrs{{B, T, C}});
      Value* h = f->add(OpKind::Add, {x, merged});
      Value* hf = f->add(OpKind::ConvertElementType, {h}, CastAttrs{DType::Float32});
      auto vm = f->add_node(OpKind::VarMean, {hf}, VarAttrs{{2}, 0});
      const Shape full{B, T, C};
      auto row = [&](Value* v) { return f->add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{full, {0, 1}}); };
      Value* r = f->add(OpKind::Rsqrt, {f->add(OpKind::Add, {vm[0], f->add_constant(Scalar::from_float(1e-5))})});
      Value* normed = f->add(OpKind::Mul, {f->add(OpKind::Sub, {hf, row(vm[1])}), row(r)});
      f->add_output(h);
      f->add_output(f->add(OpKind::ConvertElementType, {normed}, CastAttrs{DType::BFloat16}));
      const HostTensor yt = make_input(DType::BFloat16, {B, H, T, hs},
                                       misaligned ? InputLayout::Misaligned : InputLayout::Contiguous, seed++);
      const Plan plan = check(f, {yt, random_tensor(DType::BFloat16, full, seed++)}, C);
      EXPECT_EQ(plan.kernel_count(), 1);
    }
  }
}

// Reductions of different extents cannot share a kernel: the row sums get one, whose results go to
// a new buffer that the column maxima's kernel reads, which also writes the output; explain says
// why and counts the buffer.
TEST_P(ReductionKernels, DifferentExtents_SplitIntoKernelsMatchReference) {
  auto f = std::make_shared<Fusion>();
  const Shape s{9, 14};
  Value* x = f->add_tensor_input("x", DType::Float32, s);
  Value* rows = f->add(OpKind::Sum, {x}, DimsAttrs{{1}});
  Value* cols = f->add(OpKind::Amax, {x}, DimsAttrs{{0}});
  Value* y = f->add(OpKind::Add, {f->add(OpKind::BroadcastInDim, {rows}, BroadcastAttrs{s, {0}}),
                                   f->add(OpKind::BroadcastInDim, {cols}, BroadcastAttrs{s, {1}})});
  f->add_output(f->add(OpKind::Mul, {y, x}));
  const Plan plan = check(f, {random_tensor(DType::Float32, s, 400)}, 14);
  ASSERT_EQ(plan.kernel_count(), 2);
  EXPECT_THAT(plan.segments[0].note, HasSubstr("split"));
  EXPECT_THAT(plan.segments[0].note, HasSubstr("reduces extents [9]"));
  EXPECT_EQ(plan.allocated_bytes, (9 + 9 * 14) * 4);
}

// Cross-entropy's forward: the log-softmax of each row, padded with columns of a value (nll_loss's
// ignored targets read the padding): one kernel, the padding stored as the row's own stores.
TEST_P(ReductionKernels, PaddedAlongTheRow_OneKernelMatchesReference) {
  uint64_t seed = 600;
  for (const int64_t row : {40, 5000}) {  // CUDA: a row in registers, a strided loop
    for (const PadDim pad : {PadDim{0, 1, 0}, PadDim{2, 3, 0}}) {
      SCOPED_TRACE("rows of " + std::to_string(row) + ", pad " + std::to_string(pad.lo) + ", " + std::to_string(pad.hi));
      auto f = std::make_shared<Fusion>();
      const Shape s{6, row};
      Value* x = f->add_tensor_input("x", DType::BFloat16, s);
      Value* xf = f->add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
      Value* m = f->add(OpKind::BroadcastInDim, {f->add(OpKind::Amax, {xf}, DimsAttrs{{1}})}, BroadcastAttrs{s, {0}});
      Value* e = f->add(OpKind::Exp, {f->add(OpKind::Sub, {xf, m})});
      Value* l = f->add(OpKind::Log, {f->add(OpKind::Sum, {e}, DimsAttrs{{1}})});
      Value* ls = f->add(OpKind::Sub, {f->add(OpKind::Sub, {xf, m}), f->add(OpKind::BroadcastInDim, {l}, BroadcastAttrs{s, {0}})});
      Value* lsb = f->add(OpKind::ConvertElementType, {ls}, CastAttrs{DType::BFloat16});
      f->add_output(lsb);
      f->add_output(f->add(OpKind::Pad, {f->add(OpKind::Neg, {lsb}), f->add_constant(Scalar::from_float(0.5))},
                           PadAttrs{{PadDim{}, pad}}));
      const Plan plan = check(f, random_inputs(*f, seed++), row);
      EXPECT_EQ(plan.kernel_count(), 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ReductionKernels, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

TEST(LowerKernel, SameExtentsAndShapes_NoProblem) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {4, 8});
  Value* m = f.add(OpKind::Amax, {x}, DimsAttrs{{1}});
  f.add_output(f.add(OpKind::Sub, {x, f.add(OpKind::BroadcastInDim, {m}, BroadcastAttrs{{4, 8}, {0}})}));
  const LoweredKernel lowered = lower_kernel(test::contiguous_spec(f));
  EXPECT_TRUE(lowered.ok()) << lowered.problem;
  EXPECT_EQ(lowered.ir.nests.size(), 1u);
}

TEST(LowerKernel, ResultReadAlongReducedDim_ProblemNamed) {
  Fusion f;  // a square input whose row sums are broadcast along the other dim
  Value* x = f.add_tensor_input("x", DType::Float32, {5, 5});
  Value* r = f.add(OpKind::Sum, {x}, DimsAttrs{{1}});
  f.add_output(f.add(OpKind::Add, {x, f.add(OpKind::BroadcastInDim, {r}, BroadcastAttrs{{5, 5}, {1}})}));
  EXPECT_THAT(lower_kernel(test::contiguous_spec(f)).problem, HasSubstr("depends on the reduced dims"));
}

// An output whose shape splits a dim of the reduction's input is not stored by its kernel; one
// that merges dims is (its index is the merged dims' linearisation).
TEST(LowerKernel, OutputOfOtherShape_ProblemNamed) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {4, 8});
  f.add_output(f.add(OpKind::Sum, {x}, DimsAttrs{{1}}));
  f.add_output(f.add(OpKind::Reshape, {x}, ReshapeAttrs{{2, 16}}));
  EXPECT_THAT(lower_kernel(test::contiguous_spec(f)).problem, HasSubstr("has neither the shape [4, 8]"));
  Fusion g;
  Value* y = g.add_tensor_input("y", DType::Float32, {4, 8, 3});
  g.add_output(g.add(OpKind::Sum, {y}, DimsAttrs{{2}}));
  g.add_output(g.add(OpKind::Reshape, {y}, ReshapeAttrs{{32, 3}}));
  g.add_output(g.add(OpKind::Reshape, {g.outputs()[0]}, ReshapeAttrs{{1, 32}}));
  const LoweredKernel merged = lower_kernel(test::contiguous_spec(g));
  ASSERT_TRUE(merged.ok()) << merged.problem;
  EXPECT_EQ(merged.ir.nests.size(), 1u);
}

}  // namespace
}  // namespace vf
