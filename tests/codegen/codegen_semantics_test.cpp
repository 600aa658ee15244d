// Op semantics of generated CPU kernels against the reference executor and hand values: integer
// wrapping and division by zero, float-to-int casts, NaN propagation, half rounding after each op,
// 1 + tanh(u) written as vf_one_plus_tanh.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/fold_tanh_gelu.h"
#include "codegen/generate_kernel.h"
#include "codegen/lower_kernel.h"
#include "codegen_test_util.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"

namespace vf {
namespace {

using test::expect_matches_reference;
using test::fill;
using test::run_cpu;
using test::values;

using test::backend;

using test::from_values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CodegenSemantics, IntegerDivision_ByZeroAndMinOverMinusOne) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int32, {6});
  Value* b = f.add_tensor_input("b", DType::Int32, {6});
  f.add_output(f.add(OpKind::Div, {a, b}));
  f.add_output(f.add(OpKind::Remainder, {a, b}));
  f.add_output(f.add(OpKind::Fmod, {a, b}));
  const double int_min = -2147483648.0;
  std::vector<HostTensor> in{from_values(DType::Int32, {7, -7, 7, int_min, 5, -9}),
                             from_values(DType::Int32, {2, 2, 0, -1, -3, 4})};
  auto out = run_cpu(backend(), f, in);
  EXPECT_EQ(values(out[0]), (std::vector<double>{3, -3, 0, int_min, -1, -2}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 1, 0, 0, -1, 3}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{1, -1, 0, 0, 2, -1}));
  expect_matches_reference(backend(), f, in);
}

TEST(CodegenSemantics, Int8Arithmetic_Wraps) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int8, {4});
  Value* b = f.add_tensor_input("b", DType::Int8, {4});
  f.add_output(f.add(OpKind::Add, {a, b}));
  f.add_output(f.add(OpKind::Mul, {a, b}));
  f.add_output(f.add(OpKind::Neg, {a}));
  f.add_output(f.add(OpKind::Abs, {a}));
  f.add_output(f.add(OpKind::Pow, {a, b}));
  std::vector<HostTensor> in{from_values(DType::Int8, {127, -128, 100, 2}), from_values(DType::Int8, {1, -1, 3, -2})};
  auto out = run_cpu(backend(), f, in);
  EXPECT_EQ(values(out[0]), (std::vector<double>{-128, 127, 103, 0}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{127, -128, 44, -4}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{-127, -128, -100, -2}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{127, -128, 100, 2}));
  EXPECT_EQ(values(out[4]), (std::vector<double>{127, 0, 64, 0}));  // -128^-1 = 0; 100^3 wraps
  expect_matches_reference(backend(), f, in);
}

TEST(CodegenSemantics, FloatToIntCast_TruncatesSaturatesWraps) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float64, {7});
  f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{DType::Int64}));
  f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{DType::Int8}));
  f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{DType::Bool}));
  std::vector<HostTensor> in{from_values(DType::Float64, {2.9, -2.9, kNaN, 1e300, -kInf, 200.0, 0.0})};
  auto out = run_cpu(backend(), f, in);
  const double i64_max = 9223372036854775807.0, i64_min = -9223372036854775808.0;
  EXPECT_EQ(values(out[0]), (std::vector<double>{2, -2, 0, i64_max, i64_min, 200, 0}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{2, -2, 0, -1, 0, -56, 0}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{1, 1, 1, 1, 1, 1, 0}));
  expect_matches_reference(backend(), f, in);
}

TEST(CodegenSemantics, HalfTypes_RoundAfterEachOp) {
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    Fusion f;
    Value* a = f.add_tensor_input("a", dtype, {64});
    Value* b = f.add_tensor_input("b", dtype, {64});
    Value* s = f.add(OpKind::Add, {a, b});
    Value* m = f.add(OpKind::Mul, {s, f.add_constant(Scalar::from_float(1.1))});
    f.add_output(f.add(OpKind::Sub, {m, a}));
    f.add_output(f.add(OpKind::ConvertElementType, {m}, CastAttrs{DType::Float32}));
    std::vector<HostTensor> in{random_tensor(dtype, {64}, 31), random_tensor(dtype, {64}, 32)};
    Tolerance exact{0, 0};
    expect_matches_reference(backend(), f, in, {}, {}, &exact);
  }
}

TEST(CodegenSemantics, MaxMinPropagateNaN_RoundHalfEven) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4});
  Value* b = f.add_tensor_input("b", DType::Float32, {4});
  f.add_output(f.add(OpKind::Maximum, {a, b}));
  f.add_output(f.add(OpKind::Minimum, {a, b}));
  f.add_output(f.add(OpKind::Round, {a}));
  std::vector<HostTensor> in{from_values(DType::Float32, {kNaN, 1, 2.5, -0.5}),
                             from_values(DType::Float32, {1, kNaN, 3, 1.5})};
  auto out = run_cpu(backend(), f, in);
  auto v = values(out[0]);
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_EQ(v[2], 3);
  v = values(out[1]);
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_EQ(v[3], -0.5);
  v = values(out[2]);
  EXPECT_EQ(v[2], 2);
  EXPECT_EQ(v[3], 0);
  expect_matches_reference(backend(), f, in);
}

// pow by a constant 1, 2 or 3 is the operand or its products in the kernel: x^1 and x^2 the
// reference's bits (-0, infinities and NaN included), x^3 within an ulp; bf16's x^2 rounded once;
// other exponents (0.5) and bf16's x^3 stay powf.
TEST(CodegenSemantics, PowByOneTwoThree_ProductsMatchReference) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {12});
  Value* h = f.add_tensor_input("h", DType::BFloat16, {12});
  auto c = [&](double v) { return f.add_constant(Scalar::from_float(v)); };
  for (double p : {1.0, 2.0, 3.0, 0.5}) f.add_output(f.add(OpKind::Pow, {x, c(p)}));
  for (double p : {2.0, 3.0}) f.add_output(f.add(OpKind::Pow, {h, c(p)}));
  const std::vector<double> v{0.0, -0.0, 1e-30, -3.5, 1.1, 7e12, -7e12, 1e20, kInf, -kInf, kNaN, 0.3};
  const std::vector<HostTensor> in{from_values(DType::Float32, v), from_values(DType::BFloat16, v)};
  const std::vector<HostTensor> out = run_cpu(backend(), f, in);
  const std::vector<HostTensor> want = run_reference(f, {in[0], in[1]});
  for (size_t o : {size_t{0}, size_t{1}, size_t{4}}) {
    SCOPED_TRACE(o);
    const Comparison same = compare_tensors(out[o], want[o], Tolerance{});
    EXPECT_TRUE(same.ok) << same.first_mismatch;
  }
  expect_matches_reference(backend(), f, in);
  KernelSpec spec{&f, {in[0].layout(), in[1].layout()}, {}};
  for (int o = 0; o < 6; ++o) spec.output_layouts.push_back(Layout::contiguous({12}));
  const GeneratedKernel k = generate_kernel(spec, Target::Cpu);
  const std::string body = k.source.substr(k.source.rfind(k.entry));
  size_t pows = 0;
  for (size_t at = body.find("vf_pow("); at != std::string::npos; at = body.find("vf_pow(", at + 1)) ++pows;
  EXPECT_EQ(pows, 2u) << body;  // x^0.5 and bf16's x^3
}

// The tanh gelu's 0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3))) and 1 + tanh(u), tanh(u) + 1 and
// 1 - tanh(u) over the whole range (where 1 + tanh(u) underflows, at infinities and NaN).
Fusion one_plus_tanh_fusion(DType dtype, int64_t n) {
  Fusion f;
  Value* x = f.add_tensor_input("x", dtype, {n});
  auto c = [&](double v) { return f.add_constant(Scalar::from_float(v)); };
  Value* t = f.add(OpKind::Tanh, {x});
  f.add_output(f.add(OpKind::Add, {c(1.0), t}));
  f.add_output(f.add(OpKind::Add, {t, c(1.0)}));
  f.add_output(f.add(OpKind::Sub, {c(1.0), t}));
  Value* cube = f.add(OpKind::Mul, {f.add(OpKind::Mul, {x, x}), x});
  Value* u = f.add(OpKind::Mul, {c(0.7978845608028654), f.add(OpKind::Add, {x, f.add(OpKind::Mul, {c(0.044715), cube})})});
  Value* half_x = f.add(OpKind::Mul, {c(0.5), x});
  f.add_output(f.add(OpKind::Mul, {half_x, f.add(OpKind::Add, {c(1.0), f.add(OpKind::Tanh, {u})})}));
  return f;
}

std::vector<double> one_plus_tanh_inputs() {
  std::vector<double> v{0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 88.0, -88.0, 1e30, -1e30, kInf, -kInf, kNaN};
  for (int k = -600; k <= 600; k += 7) v.push_back(k / 10.0);
  return v;
}

TEST(CodegenSemantics, OnePlusTanh_FusedAndMatchesReference) {
  const std::vector<double> v = one_plus_tanh_inputs();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Fusion f = one_plus_tanh_fusion(dtype, static_cast<int64_t>(v.size()));
    KernelSpec full{&f, {Layout::contiguous(f.inputs()[0]->shape)}, {}};
    for (const Value* o : f.outputs()) full.output_layouts.push_back(Layout::contiguous(o->shape));
    // The rewrite of the IR: 1 + tanh(u), tanh(u) + 1, 1 - tanh(u), the gelu's 1 + tanh(u) and its
    // product with 0.5 * x.
    KernelIR ir = lower_kernel(full).ir;
    EXPECT_EQ(fold_tanh_gelu(ir), 5);
    for (Target target : {Target::Cpu, Target::Cuda}) {
      const std::string source = generate_kernel(full, target).source;
      EXPECT_NE(source.find("vf_one_plus_tanh(-v"), std::string::npos) << "1 - tanh(u)";
      size_t calls = 0;
      for (size_t at = source.find("= vf_one_plus_tanh(v"); at != std::string::npos; at = source.find("= vf_one_plus_tanh(v", at + 1))
        ++calls;
      // 1 + tanh(u) and tanh(u) + 1 in each loop that the source has (CUDA: two); the gelu's is
      // folded into its product and, no longer read, not emitted, nor are the tanhs.
      EXPECT_TRUE(calls > 0 && calls % 2 == 0) << calls;
      EXPECT_EQ(source.find("= vf_tanh("), std::string::npos);
      // The gelu's product: 0.5 * x and the 2 of vf_one_plus_tanh cancel.
      EXPECT_NE(source.find("= vf_half_x_one_plus_tanh(v"), std::string::npos) << "0.5 * x * (1 + tanh(u))";
    }
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_matches_reference(backend(), f, {from_values(dtype, v)});
  }
}

TEST(CodegenSemantics, OnePlusTanhInHalfType_RoundsTanhFirst) {
  // In bf16 the tanh is rounded before the add: no fused form.
  const std::vector<double> v = one_plus_tanh_inputs();
  const Fusion f = one_plus_tanh_fusion(DType::BFloat16, static_cast<int64_t>(v.size()));
  KernelSpec spec{&f, {Layout::contiguous(f.inputs()[0]->shape)}, {}};
  for (const Value* o : f.outputs()) spec.output_layouts.push_back(Layout::contiguous(o->shape));
  EXPECT_EQ(generate_kernel(spec, Target::Cpu).source.find("vf_one_plus_tanh(v"), std::string::npos);
  expect_matches_reference(backend(), f, {from_values(DType::BFloat16, v)});
}

// Every unary float op, on f32, f16 and f64, against the reference.
TEST(CodegenSemantics, UnaryFloatOps_MatchReference) {
  for (DType dtype : {DType::Float32, DType::Float16, DType::Float64}) {
    Fusion f;
    Value* a = f.add_tensor_input("a", dtype, {40});
    for (OpKind op : test::kUnaryFloatOps) f.add_output(f.add(op, {a}));
    HostTensor t = random_tensor(dtype, {40}, 33);
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_matches_reference(backend(), f, {t});
  }
}

// The special functions inside their domains: the inverse error functions' tails (where 1 - c
// has no digits of c left), digamma and lgamma beside their poles and across the reflection.
TEST(CodegenSemantics, SpecialFunctionsInTheirDomains_MatchReference) {
  const std::vector<double> unit = {1e-300, 1e-30, 1e-7, 0.001, 0.02, 0.25, 0.5, 0.7, 0.9375, 0.999, 1.0, 0.0};
  const std::vector<double> reals = {-7.25, -2.5, -1.0001, -0.999, -1e-6, 1e-6, 0.5, 1.0, 1.4616, 2.0, 3.7, 40.0,
                                     1e6, -4.0, 0.0, -0.0};
  for (DType dtype : {DType::Float32, DType::BFloat16, DType::Float64}) {
    SCOPED_TRACE(dtype_short_name(dtype));
    Fusion f;
    Value* p = f.add_tensor_input("p", dtype, {static_cast<int64_t>(unit.size())});
    Value* x = f.add_tensor_input("x", dtype, {static_cast<int64_t>(reals.size())});
    f.add_output(f.add(OpKind::Ndtri, {p}));
    f.add_output(f.add(OpKind::Erfcinv, {p}));
    f.add_output(f.add(OpKind::Erfcinv, {f.add(OpKind::Sub, {f.add_constant(Scalar::from_float(2)), p})}));
    f.add_output(f.add(OpKind::Digamma, {x}));
    f.add_output(f.add(OpKind::Lgamma, {x}));
    expect_matches_reference(backend(), f, {from_values(dtype, unit), from_values(dtype, reals)});
  }
}

// Hurwitz zeta over its domain's cases: x at and near 1, large x, q small, negative (integer and
// not), between the direct sum and the Euler-Maclaurin tail.
TEST(CodegenSemantics, ZetaInItsDomain_MatchesReference) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_short_name(dtype));
    const Fusion f = test::zeta_fusion(dtype);
    expect_matches_reference(backend(), f, test::zeta_domain_inputs(dtype));
  }
}

// torch.sign keeps a bool tensor's values.
TEST(CodegenSemantics, SignOfBool_IsTheInput) {
  Fusion f;
  Value* b = f.add_tensor_input("b", DType::Bool, {4});
  f.add_output(f.add(OpKind::Sign, {b}));
  EXPECT_EQ(f.outputs()[0]->dtype, DType::Bool);
  expect_matches_reference(backend(), f, {from_values(DType::Bool, {1, 0, 0, 1})});
}

TEST(CodegenSemantics, BinaryAndTernaryOps_MatchReference) {
  for (DType dtype : {DType::Float32, DType::BFloat16, DType::Int16, DType::Int64, DType::UInt8}) {
    Fusion f;
    Value* a = f.add_tensor_input("a", dtype, {50});
    Value* b = f.add_tensor_input("b", dtype, {50});
    Value* c = f.add_tensor_input("c", DType::Bool, {50});
    for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Maximum, OpKind::Minimum,
                      OpKind::Fmod, OpKind::Remainder, OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt,
                      OpKind::Ge})
      f.add_output(f.add(op, {a, b}));
    f.add_output(f.add(OpKind::Where, {c, a, b}));
    if (is_floating(dtype)) {
      f.add_output(f.add(OpKind::Pow, {a, b}));
      f.add_output(f.add(OpKind::Atan2, {a, b}));
      f.add_output(f.add(OpKind::Lerp, {a, b, f.add(OpKind::Abs, {a})}));
      f.add_output(f.add(OpKind::Zeta, {a, b}));
      if (!is_half(dtype)) f.add_output(f.add(OpKind::Nextafter, {a, b}));
    } else {
      for (OpKind op : {OpKind::BitwiseAnd, OpKind::BitwiseOr, OpKind::BitwiseXor, OpKind::BitwiseLeftShift,
                        OpKind::BitwiseRightShift})
        f.add_output(f.add(op, {a, b}));
      f.add_output(f.add(OpKind::BitwiseNot, {a}));
      f.add_output(f.add(OpKind::Sign, {a}));
    }
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_matches_reference(backend(), f,
                             {random_tensor(dtype, {50}, 34), random_tensor(dtype, {50}, 35),
                              random_tensor(DType::Bool, {50}, 36)});
  }
}

TEST(CodegenSemantics, CastsBetweenAllDtypes_MatchReference) {
  for (DType from : test::kAllDTypes) {
    Fusion f;
    Value* a = f.add_tensor_input("a", from, {30});
    for (DType to : test::kAllDTypes) f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{to}));
    SCOPED_TRACE(dtype_short_name(from));
    expect_matches_reference(backend(), f, {random_tensor(from, {30}, 37)});
  }
}

}  // namespace
}  // namespace vf
