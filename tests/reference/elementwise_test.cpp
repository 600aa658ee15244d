// Tests of the reference's unary, binary and ternary ops against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/reference_ops.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_binary;
using testing::run_unary;
using testing::run_with_scalar;
using testing::values_of;

using testing::kNaN;
using testing::kInf;
using testing::kI64Min;
using testing::kI64Max;

struct UnaryCase {
  OpKind op;
  double x;
  double expected;
};

// Values from Python's math module (double precision).
const UnaryCase kUnaryCases[] = {
    {OpKind::Abs, -2.5, 2.5},
    {OpKind::Neg, 3, -3},
    {OpKind::Exp, 1, 2.718281828459045},
    {OpKind::Exp2, 3, 8},
    {OpKind::Expm1, 1e-10, 1.00000000005e-10},
    {OpKind::Log, 8, 2.0794415416798357},
    {OpKind::Log1p, 1e-10, 9.999999999500001e-11},
    {OpKind::Log2, 8, 3},
    {OpKind::Log10, 1000, 3},
    {OpKind::Sqrt, 2, 1.4142135623730951},
    {OpKind::Rsqrt, 4, 0.5},
    {OpKind::Reciprocal, 4, 0.25},
    {OpKind::Sin, 0.5, 0.479425538604203},
    {OpKind::Cos, 0.5, 0.8775825618903728},
    {OpKind::Tan, 0.5, 0.5463024898437905},
    {OpKind::Tanh, 0.5, 0.46211715726000974},
    {OpKind::Sinh, 0.5, 0.5210953054937474},
    {OpKind::Cosh, 0.5, 1.1276259652063807},
    {OpKind::Asin, 0.5, 0.5235987755982989},
    {OpKind::Acos, 0.5, 1.0471975511965979},
    {OpKind::Atan, 1, 0.7853981633974483},
    {OpKind::Erf, 0.5, 0.5204998778130465},
    {OpKind::Erfc, 0.5, 0.4795001221869535},
    {OpKind::Erfinv, 0.5, 0.47693627620446987},
    {OpKind::Acosh, 2, 1.3169578969248167},
    {OpKind::Asinh, 0.5, 0.48121182505960345},
    {OpKind::Atanh, 0.5, 0.5493061443340548},
    {OpKind::Lgamma, 0.5, 0.5723649429247001},
    {OpKind::Digamma, 1, -0.5772156649015329},
    {OpKind::Digamma, -0.5, 0.03648997397857652},
    {OpKind::Erfcinv, 0.5, 0.4769362762044699},
    {OpKind::Ndtri, 0.75, 0.6744897501960817},
    {OpKind::Sign, -3, -1},
    {OpKind::Sign, 0, 0},
    {OpKind::Sign, 2.5, 1},
    {OpKind::Floor, -1.5, -2},
    {OpKind::Ceil, -1.5, -1},
    {OpKind::Trunc, -1.7, -1},
    {OpKind::Round, 2.5, 2},
    {OpKind::Round, 3.5, 4},
    {OpKind::Round, -2.5, -2},
    {OpKind::Round, 0.5, 0},
    {OpKind::Round, 1.6, 2},
};

TEST(ReferenceUnary, Float64Values_MatchMath) {
  for (const UnaryCase& c : kUnaryCases) {
    HostTensor out = run_unary(c.op, make_tensor(DType::Float64, {1}, {c.x}));
    ASSERT_EQ(out.dtype(), DType::Float64);
    EXPECT_NEAR(values_of(out)[0], c.expected, 1e-15 * std::max(1.0, std::fabs(c.expected)))
        << op_name(c.op) << "(" << c.x << ")";
  }
}

TEST(ReferenceUnary, Float32Values_MatchMathToFloatPrecision) {
  for (const UnaryCase& c : kUnaryCases) {
    HostTensor out = run_unary(c.op, make_tensor(DType::Float32, {1}, {c.x}));
    ASSERT_EQ(out.dtype(), DType::Float32);
    EXPECT_NEAR(values_of(out)[0], c.expected, 2e-7 * std::max(1.0, std::fabs(c.expected)))
        << op_name(c.op) << "(" << c.x << ")";
  }
}

TEST(ReferenceUnary, SignOfNaN_IsZeroAsTorch) {
  EXPECT_EQ(values_of(run_unary(OpKind::Sign, make_tensor(DType::Float32, {1}, {kNaN})))[0], 0.0);
}

TEST(ReferenceUnary, HalfResults_RoundedToDtype) {
  // exp(1) = 2.71828...: bf16 keeps 8 significant bits (2.71875), f16 11 (2.71875 too), f32 24.
  EXPECT_EQ(values_of(run_unary(OpKind::Exp, make_tensor(DType::BFloat16, {1}, {1})))[0], 2.71875);
  EXPECT_EQ(values_of(run_unary(OpKind::Exp, make_tensor(DType::Float16, {1}, {1})))[0], 2.71875);
  EXPECT_EQ(values_of(run_unary(OpKind::Sqrt, make_tensor(DType::BFloat16, {1}, {2})))[0], 1.4140625);
}

TEST(ReferenceUnary, IntegerOps_WrapAndKeepValues) {
  EXPECT_EQ(ints_of(run_unary(OpKind::Abs, make_int_tensor(DType::Int64, {3}, {kI64Min, -5, 5}))),
            (std::vector<int64_t>{kI64Min, 5, 5}));
  EXPECT_EQ(ints_of(run_unary(OpKind::Neg, make_int_tensor(DType::Int8, {3}, {-128, 127, 0}))),
            (std::vector<int64_t>{-128, -127, 0}));
  EXPECT_EQ(ints_of(run_unary(OpKind::Sign, make_int_tensor(DType::Int32, {3}, {-7, 0, 9}))),
            (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(ints_of(run_unary(OpKind::Floor, make_int_tensor(DType::Int16, {2}, {-7, 9}))),
            (std::vector<int64_t>{-7, 9}));
  EXPECT_EQ(ints_of(run_unary(OpKind::BitwiseNot, make_int_tensor(DType::Int32, {2}, {5, -1}))),
            (std::vector<int64_t>{-6, 0}));
  EXPECT_EQ(ints_of(run_unary(OpKind::BitwiseNot, make_int_tensor(DType::UInt8, {2}, {5, 0}))),
            (std::vector<int64_t>{250, 255}));
  EXPECT_EQ(ints_of(run_unary(OpKind::BitwiseNot, make_int_tensor(DType::Bool, {2}, {1, 0}))),
            (std::vector<int64_t>{0, 1}));
}

TEST(ReferenceUnary, IsFiniteAndSignbit_GiveBool) {
  HostTensor f = make_tensor(DType::Float32, {5}, {1, kInf, -kInf, kNaN, -0.0});
  HostTensor finite = run_unary(OpKind::IsFinite, f);
  EXPECT_EQ(finite.dtype(), DType::Bool);
  EXPECT_EQ(ints_of(finite), (std::vector<int64_t>{1, 0, 0, 0, 1}));
  HostTensor signbit = run_unary(OpKind::Signbit, f);
  EXPECT_EQ(signbit.dtype(), DType::Bool);
  EXPECT_EQ(ints_of(signbit), (std::vector<int64_t>{0, 0, 1, 0, 1}));
  HostTensor ints = make_int_tensor(DType::Int32, {3}, {-1, 0, 3});
  EXPECT_EQ(ints_of(run_unary(OpKind::IsFinite, ints)), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(ints_of(run_unary(OpKind::Signbit, ints)), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ReferenceErfinv, KnownValues_MatchHighPrecision) {
  // mpmath at 30 digits, for the double nearest each input.
  struct Case {
    double y, expected;
  };
  for (const Case& c : {Case{0.5, 0.47693627620446987338}, Case{0.9, 1.1630871536766741628},
                        Case{0.999, 2.3267537655135244939}, Case{-0.3, -0.27246271472675434502},
                        Case{1e-10, 8.8622692545275804594e-11}, Case{0.9999999999, 4.5728249585449249378},
                        Case{1 - 0x1p-52, 5.8050186831934533002}}) {
    EXPECT_NEAR(reference::erfinv(c.y), c.expected, 4e-16 * std::fabs(c.expected)) << "y = " << c.y;
  }
}

TEST(ReferenceErfinv, EdgeValues_InfNaNAndSignedZero) {
  EXPECT_EQ(reference::erfinv(1.0), kInf);
  EXPECT_EQ(reference::erfinv(-1.0), -kInf);
  EXPECT_TRUE(std::isnan(reference::erfinv(1.5)));
  EXPECT_TRUE(std::isnan(reference::erfinv(kNaN)));
  EXPECT_TRUE(std::signbit(reference::erfinv(-0.0)));
}

TEST(ReferenceErfinv, RoundTripThroughErf_RecoversInput) {
  for (double x = -5.5; x <= 5.5; x += 0.125) {
    const double y = std::erf(x);
    if (std::fabs(y) == 1.0) continue;
    EXPECT_NEAR(reference::erfinv(y), x, 1e-15 * std::max(1.0, std::fabs(x) * std::exp(x * x))) << "x = " << x;
    EXPECT_NEAR(std::erf(reference::erfinv(y)), y, 2.3e-16) << "x = " << x;
  }
}

TEST(ReferenceBinary, Float64Arithmetic_MatchesHandValues) {
  HostTensor a = make_tensor(DType::Float64, {4}, {1, -7.5, 2, 1});
  HostTensor b = make_tensor(DType::Float64, {4}, {0, 2, 0.5, 2});
  EXPECT_EQ(values_of(run_binary(OpKind::Add, a, b)), (std::vector<double>{1, -5.5, 2.5, 3}));
  EXPECT_EQ(values_of(run_binary(OpKind::Sub, a, b)), (std::vector<double>{1, -9.5, 1.5, -1}));
  EXPECT_EQ(values_of(run_binary(OpKind::Mul, a, b)), (std::vector<double>{0, -15, 1, 2}));
  EXPECT_EQ(values_of(run_binary(OpKind::Div, a, b)), (std::vector<double>{kInf, -3.75, 4, 0.5}));
  EXPECT_DOUBLE_EQ(values_of(run_binary(OpKind::Pow, a, b))[2], 1.4142135623730951);
  EXPECT_DOUBLE_EQ(values_of(run_binary(OpKind::Atan2, a, b))[3], 0.4636476090008061);
}

TEST(ReferenceBinary, FloatRemainderAndFmod_TakeDivisorAndDividendSigns) {
  HostTensor a = make_tensor(DType::Float32, {4}, {7.5, -7.5, 7.5, -7.5});
  HostTensor b = make_tensor(DType::Float32, {4}, {2, 2, -2, -2});
  EXPECT_EQ(values_of(run_binary(OpKind::Remainder, a, b)), (std::vector<double>{1.5, 0.5, -0.5, -1.5}));
  EXPECT_EQ(values_of(run_binary(OpKind::Fmod, a, b)), (std::vector<double>{1.5, -1.5, 1.5, -1.5}));
}

TEST(ReferenceBinary, MaximumMinimum_PropagateNaNAndKeepInf) {
  HostTensor a = make_tensor(DType::Float32, {4}, {kNaN, 1, 2, kInf});
  HostTensor b = make_tensor(DType::Float32, {4}, {1, kNaN, 3, -kInf});
  std::vector<double> mx = values_of(run_binary(OpKind::Maximum, a, b));
  std::vector<double> mn = values_of(run_binary(OpKind::Minimum, a, b));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(mx[2], 3);
  EXPECT_EQ(mn[2], 2);
  EXPECT_EQ(mx[3], kInf);
  EXPECT_EQ(mn[3], -kInf);
}

TEST(ReferenceBinary, IntegerDivRemainderFmod_AllSignsAndZero) {
  HostTensor a = make_int_tensor(DType::Int32, {5}, {7, -7, 7, -7, 7});
  HostTensor b = make_int_tensor(DType::Int32, {5}, {2, 2, -2, -2, 0});
  EXPECT_EQ(ints_of(run_binary(OpKind::Div, a, b)), (std::vector<int64_t>{3, -3, -3, 3, 0}));
  EXPECT_EQ(ints_of(run_binary(OpKind::Remainder, a, b)), (std::vector<int64_t>{1, 1, -1, -1, 0}));
  EXPECT_EQ(ints_of(run_binary(OpKind::Fmod, a, b)), (std::vector<int64_t>{1, -1, 1, -1, 0}));
}

TEST(ReferenceBinary, IntMinDividedByMinusOne_Wraps) {
  HostTensor a32 = make_int_tensor(DType::Int32, {1}, {-2147483648LL});
  HostTensor m32 = make_int_tensor(DType::Int32, {1}, {-1});
  EXPECT_EQ(ints_of(run_binary(OpKind::Div, a32, m32))[0], -2147483648LL);
  EXPECT_EQ(ints_of(run_binary(OpKind::Remainder, a32, m32))[0], 0);
  HostTensor a64 = make_int_tensor(DType::Int64, {1}, {kI64Min});
  HostTensor m64 = make_int_tensor(DType::Int64, {1}, {-1});
  EXPECT_EQ(ints_of(run_binary(OpKind::Div, a64, m64))[0], kI64Min);
  EXPECT_EQ(ints_of(run_binary(OpKind::Fmod, a64, m64))[0], 0);
  HostTensor a8 = make_int_tensor(DType::Int8, {1}, {-128});
  EXPECT_EQ(ints_of(run_binary(OpKind::Div, a8, make_int_tensor(DType::Int8, {1}, {-1})))[0], -128);
}

TEST(ReferenceBinary, IntegerOverflow_Wraps) {
  EXPECT_EQ(ints_of(run_binary(OpKind::Add, make_int_tensor(DType::Int32, {1}, {2147483647}),
                               make_int_tensor(DType::Int32, {1}, {1})))[0],
            -2147483648LL);
  EXPECT_EQ(ints_of(run_binary(OpKind::Mul, make_int_tensor(DType::Int64, {1}, {kI64Max}),
                               make_int_tensor(DType::Int64, {1}, {2})))[0],
            -2);
  EXPECT_EQ(ints_of(run_binary(OpKind::Sub, make_int_tensor(DType::UInt8, {1}, {0}),
                               make_int_tensor(DType::UInt8, {1}, {1})))[0],
            255);
  EXPECT_EQ(ints_of(run_binary(OpKind::Mul, make_int_tensor(DType::Int8, {1}, {100}),
                               make_int_tensor(DType::Int8, {1}, {100})))[0],
            16);  // 10000 mod 256
}

TEST(ReferenceBinary, IntegerPow_NegativeExponentAndWrap) {
  HostTensor base = make_int_tensor(DType::Int32, {6}, {2, 2, 1, -1, -1, 0});
  HostTensor exp = make_int_tensor(DType::Int32, {6}, {10, -1, -3, -3, -2, 0});
  EXPECT_EQ(ints_of(run_binary(OpKind::Pow, base, exp)), (std::vector<int64_t>{1024, 0, 1, -1, 1, 1}));
  EXPECT_EQ(ints_of(run_binary(OpKind::Pow, make_int_tensor(DType::Int8, {1}, {3}),
                               make_int_tensor(DType::Int8, {1}, {5})))[0],
            -13);  // 243 wraps to int8
}

TEST(ReferenceBinary, Bitwise_IntegerAndBool) {
  HostTensor a = make_int_tensor(DType::Int16, {2}, {12, -1});
  HostTensor b = make_int_tensor(DType::Int16, {2}, {10, 3});
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseAnd, a, b)), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseOr, a, b)), (std::vector<int64_t>{14, -1}));
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseXor, a, b)), (std::vector<int64_t>{6, -4}));
  HostTensor p = make_int_tensor(DType::Bool, {4}, {0, 0, 1, 1});
  HostTensor q = make_int_tensor(DType::Bool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseAnd, p, q)), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseOr, p, q)), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints_of(run_binary(OpKind::BitwiseXor, p, q)), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run_binary(OpKind::Maximum, p, q)), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints_of(run_binary(OpKind::Minimum, p, q)), (std::vector<int64_t>{0, 0, 0, 1}));
}

// torch's shifts: a negative amount or the width or more gives 0 to the left and the sign to the
// right, at every width (values worked by hand from ATen's definitions).
TEST(ReferenceBinary, Shifts_OutOfRangeAmountsAsTorch) {
  auto shl = [](DType d, std::vector<int64_t> a, std::vector<int64_t> b) {
    const Shape s{static_cast<int64_t>(a.size())};
    return ints_of(run_binary(OpKind::BitwiseLeftShift, make_int_tensor(d, s, a), make_int_tensor(d, s, b)));
  };
  auto shr = [](DType d, std::vector<int64_t> a, std::vector<int64_t> b) {
    const Shape s{static_cast<int64_t>(a.size())};
    return ints_of(run_binary(OpKind::BitwiseRightShift, make_int_tensor(d, s, a), make_int_tensor(d, s, b)));
  };
  EXPECT_EQ(shl(DType::Int8, {1, 1, 3, -1, 5, 5}, {6, 7, 8, 3, -1, 100}), (std::vector<int64_t>{64, -128, 0, -8, 0, 0}));
  EXPECT_EQ(shr(DType::Int8, {-128, -128, 127, -5, -5, 9}, {3, 7, 9, -2, 100, 1}),
            (std::vector<int64_t>{-16, -1, 0, -1, -1, 4}));
  EXPECT_EQ(shl(DType::UInt8, {255, 1, 3}, {1, 8, 200}), (std::vector<int64_t>{254, 0, 0}));
  EXPECT_EQ(shr(DType::UInt8, {255, 255, 128}, {7, 8, 200}), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(shl(DType::Int64, {1, 1, 3}, {63, 64, -1}), (std::vector<int64_t>{kI64Min, 0, 0}));
  EXPECT_EQ(shr(DType::Int64, {kI64Min, kI64Min, 8}, {63, 64, 2}), (std::vector<int64_t>{-1, -1, 2}));
}

// nextafter steps one unit in the last place of the dtype (float32's is 2^-23 at 1).
TEST(ReferenceBinary, Nextafter_StepsInTheDtype) {
  EXPECT_EQ(values_of(run_binary(OpKind::Nextafter, make_tensor(DType::Float32, {3}, {1, 1, 0}),
                                 make_tensor(DType::Float32, {3}, {2, 0, -1}))),
            (std::vector<double>{1 + std::ldexp(1.0, -23), 1 - std::ldexp(1.0, -24), -std::ldexp(1.0, -149)}));
  EXPECT_EQ(values_of(run_binary(OpKind::Nextafter, make_tensor(DType::Float64, {2}, {1, 3}),
                                 make_tensor(DType::Float64, {2}, {0, 3}))),
            (std::vector<double>{1 - std::ldexp(1.0, -53), 3}));
}

TEST(ReferenceBinary, Comparisons_GiveBoolAndNaNIsUnordered) {
  HostTensor a = make_tensor(DType::Float32, {3}, {1, 2, kNaN});
  HostTensor b = make_tensor(DType::Float32, {3}, {2, 2, kNaN});
  struct Case {
    OpKind op;
    std::vector<int64_t> expected;
  };
  for (const Case& c : {Case{OpKind::Eq, {0, 1, 0}}, Case{OpKind::Ne, {1, 0, 1}}, Case{OpKind::Lt, {1, 0, 0}},
                        Case{OpKind::Le, {1, 1, 0}}, Case{OpKind::Gt, {0, 0, 0}}, Case{OpKind::Ge, {0, 1, 0}}}) {
    HostTensor out = run_binary(c.op, a, b);
    EXPECT_EQ(out.dtype(), DType::Bool) << op_name(c.op);
    EXPECT_EQ(ints_of(out), c.expected) << op_name(c.op);
  }
  HostTensor i = make_int_tensor(DType::Int64, {2}, {kI64Min, kI64Max});
  HostTensor j = make_int_tensor(DType::Int64, {2}, {kI64Max, kI64Max - 1});
  EXPECT_EQ(ints_of(run_binary(OpKind::Lt, i, j)), (std::vector<int64_t>{1, 0}));
}

TEST(ReferenceBinary, HalfArithmetic_RoundsAfterEachOp) {
  // 1 + 2^-8 is a tie in bf16 (spacing 2^-7 at 1) and rounds to even: 1. Twice gives 1 again,
  // where float32 arithmetic rounded only at the end would give 1 + 2^-7.
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::BFloat16, {1});
  Value* b = f.add_tensor_input("b", DType::BFloat16, {1});
  f.add_output(f.add(OpKind::Add, {f.add(OpKind::Add, {a, b}), b}));
  HostTensor out = run_reference(f, {make_tensor(DType::BFloat16, {1}, {1}),
                                     make_tensor(DType::BFloat16, {1}, {0.00390625})})[0];
  EXPECT_EQ(values_of(out)[0], 1.0);
  // 1 + 3 * 2^-9 is above the tie: rounds up to 1 + 2^-7.
  EXPECT_EQ(values_of(run_binary(OpKind::Add, make_tensor(DType::BFloat16, {1}, {1}),
                                 make_tensor(DType::BFloat16, {1}, {0.005859375})))[0],
            1.0078125);
  // f16: 1 + 3 * 2^-11 is a tie between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(values_of(run_binary(OpKind::Add, make_tensor(DType::Float16, {1}, {1}),
                                 make_tensor(DType::Float16, {1}, {0.00146484375})))[0],
            1.001953125);
}

TEST(ReferenceBinary, WeakScalars_TakeTensorDtype) {
  EXPECT_EQ(values_of(run_with_scalar(OpKind::Add, make_tensor(DType::Float32, {2}, {1, 2}), Scalar::from_float(0.5))),
            (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(values_of(run_with_scalar(OpKind::Mul, make_tensor(DType::Float64, {1}, {3}), Scalar::from_int(2))),
            (std::vector<double>{6}));
  // The int scalar wraps to int8 (300 -> 44) and the sum wraps too: 1 + 44 = 45.
  EXPECT_EQ(ints_of(run_with_scalar(OpKind::Add, make_int_tensor(DType::Int8, {1}, {1}), Scalar::from_int(300))),
            (std::vector<int64_t>{45}));
  // A float scalar with bf16 tensors stays float32 until the result is rounded: 1 + 1e-3 -> 1.
  EXPECT_EQ(values_of(run_with_scalar(OpKind::Add, make_tensor(DType::BFloat16, {1}, {1}), Scalar::from_float(1e-3))),
            (std::vector<double>{1.0}));
  EXPECT_EQ(ints_of(run_with_scalar(OpKind::Lt, make_tensor(DType::Float32, {2}, {0.5, 2}), Scalar::from_int(1))),
            (std::vector<int64_t>{1, 0}));
}

TEST(ReferenceTernary, Where_TensorAndScalarOperands) {
  Fusion f;
  Value* p = f.add_tensor_input("p", DType::Bool, {3});
  Value* x = f.add_tensor_input("x", DType::Float32, {3});
  f.add_output(f.add(OpKind::Where, {p, x, f.add_constant(Scalar::from_float(-1))}));
  f.add_output(f.add(OpKind::Where, {p, f.add_constant(Scalar::from_int(7)), f.add_constant(Scalar::from_int(8))}));
  f.add_output(f.add(OpKind::Where, {f.add_constant(Scalar::from_bool(false)), x, x}));
  auto out = run_reference(f, {make_int_tensor(DType::Bool, {3}, {1, 0, 1}), make_tensor(DType::Float32, {3}, {1, 2, 3})});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, -1, 3}));
  EXPECT_EQ(out[1].dtype(), DType::Int64);
  EXPECT_EQ(ints_of(out[1]), (std::vector<int64_t>{7, 8, 7}));
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{1, 2, 3}));
}

TEST(ReferenceTernary, Lerp_UsesTorchTwoBranchFormula) {
  Fusion f;
  Value* s = f.add_tensor_input("s", DType::Float64, {4});
  Value* e = f.add_tensor_input("e", DType::Float64, {4});
  Value* w = f.add_tensor_input("w", DType::Float64, {4});
  f.add_output(f.add(OpKind::Lerp, {s, e, w}));
  auto out = run_reference(f, {make_tensor(DType::Float64, {4}, {0, 0, 1, 1e16}),
                               make_tensor(DType::Float64, {4}, {10, 10, 2, 1}),
                               make_tensor(DType::Float64, {4}, {0.25, 0.75, 1, 1})});
  // weight 1 goes through end - (end - start) * 0, which gives end exactly even when
  // start + (end - start) would not (1e16 + (1 - 1e16) = 0 in double).
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{2.5, 7.5, 2, 1}));
}

TEST(ReferenceElementwise, EmptyTensors_GiveEmptyResults) {
  HostTensor e = make_tensor(DType::Float32, {0, 3}, {});
  for (OpKind op : {OpKind::Exp, OpKind::Neg, OpKind::IsFinite}) {
    HostTensor out = run_unary(op, e);
    EXPECT_EQ(out.shape(), (Shape{0, 3}));
    EXPECT_EQ(out.numel(), 0);
  }
  EXPECT_EQ(run_binary(OpKind::Add, e, e).shape(), (Shape{0, 3}));
  EXPECT_EQ(run_binary(OpKind::Lt, e, e).dtype(), DType::Bool);
  Fusion f;
  Value* p = f.add_tensor_input("p", DType::Bool, {0, 3});
  Value* x = f.add_tensor_input("x", DType::Float32, {0, 3});
  f.add_output(f.add(OpKind::Where, {p, x, x}));
  f.add_output(f.add(OpKind::Lerp, {x, x, f.add_constant(Scalar::from_float(0.5))}));
  f.add_output(f.add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Int8}));
  auto out = run_reference(f, {make_tensor(DType::Bool, {0, 3}, {}), e});
  for (const HostTensor& t : out) EXPECT_EQ(t.shape(), (Shape{0, 3}));
  EXPECT_EQ(out[2].dtype(), DType::Int8);
}

// mpmath at 30 digits: erfc's inverse from 1e-300 (where 1 - c is 1) to near 2, digamma across
// the reflection, the recurrence and the series.
TEST(ReferenceSpecialFunctions, KnownValues_MatchHighPrecision) {
  struct Case {
    double (*fn)(double);
    double x, expected;
  };
  const Case cases[] = {
      {reference::erfcinv, 1e-300, 26.209469960516124}, {reference::erfcinv, 1e-20, 6.601580622355143},
      {reference::erfcinv, 1e-5, 3.123413274340875},     {reference::erfcinv, 0.01, 1.8213863677184497},
      {reference::erfcinv, 0.3, 0.7328690779592169},     {reference::erfcinv, 1.7, -0.7328690779592168},
      {reference::erfcinv, 1.999, -2.3267537655135466},  {reference::digamma, -2.5, 1.1031566406452432},
      {reference::digamma, 0.1, -10.423754940411076},    {reference::digamma, 3.7, 1.1671535393615114},
      {reference::digamma, 25.0, 3.198742512851974},     {reference::digamma, 1e-8, -100000000.57721564},
  };
  for (const Case& c : cases)
    EXPECT_NEAR(c.fn(c.x), c.expected, 1e-15 * std::fabs(c.expected)) << "x = " << c.x;
}

// Hurwitz zeta at closed forms: zeta(s, 1) is Riemann's (pi^2 / 6, Apery's constant, pi^4 / 90),
// zeta(s, 1/2) = (2^s - 1) zeta(s), and a negative q adds the terms below 1/2; and torch's edges.
TEST(ReferenceSpecialFunctions, Zeta_ClosedFormsAndEdges) {
  const double pi = 3.141592653589793;
  auto zeta = [](double x, double q) {
    return values_of(run_binary(OpKind::Zeta, make_tensor(DType::Float64, {1}, {x}), make_tensor(DType::Float64, {1}, {q})))[0];
  };
  EXPECT_NEAR(zeta(2, 1), pi * pi / 6, 1e-15);
  EXPECT_NEAR(zeta(3, 1), 1.2020569031595942, 1e-15);
  EXPECT_NEAR(zeta(4, 1), pi * pi * pi * pi / 90, 1e-15);
  EXPECT_NEAR(zeta(2, 0.5), pi * pi / 2, 4e-15);
  EXPECT_NEAR(zeta(2, -1.5), 1 / 2.25 + 1 / 0.25 + pi * pi / 2, 1e-14);
  double direct = 0;  // the series itself, where it converges fast
  for (int k = 40; k >= 2; --k) direct += std::pow(k, -30.0);
  EXPECT_NEAR(zeta(30, 2), direct, 1e-15 * direct);
  EXPECT_EQ(zeta(1, 2), kInf);
  EXPECT_TRUE(std::isnan(zeta(0.5, 2)));
  EXPECT_EQ(zeta(2, -3), kInf);
  EXPECT_EQ(zeta(2, 0), kInf);
  EXPECT_TRUE(std::isnan(zeta(2.5, -1.5)));
}

TEST(ReferenceSpecialFunctions, EdgeValues_InfNaNAndPoles) {
  EXPECT_EQ(reference::erfcinv(0.0), kInf);
  EXPECT_EQ(reference::erfcinv(2.0), -kInf);
  EXPECT_TRUE(std::isnan(reference::erfcinv(-0.5)));
  EXPECT_TRUE(std::isnan(reference::erfcinv(2.5)));
  EXPECT_EQ(reference::ndtri(0.0), -kInf);
  EXPECT_EQ(reference::ndtri(1.0), kInf);
  EXPECT_EQ(reference::ndtri(0.5), 0.0);
  EXPECT_TRUE(std::isnan(reference::ndtri(1.5)));
  EXPECT_EQ(reference::digamma(0.0), -kInf);  // as PyTorch
  EXPECT_EQ(reference::digamma(-0.0), kInf);
  EXPECT_TRUE(std::isnan(reference::digamma(-3.0)));
  EXPECT_TRUE(std::isnan(reference::digamma(-kInf)));
  EXPECT_EQ(reference::digamma(kInf), kInf);
  EXPECT_EQ(reference::lgamma(-3.0), kInf);
  EXPECT_NEAR(reference::lgamma(-2.5), -0.05624371649767405, 1e-15);
}

}  // namespace
}  // namespace vf
