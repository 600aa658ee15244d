// The executor's argument checks: every mistake is a UserError naming the input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "runtime/executor.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

struct OneInput {
  std::shared_ptr<Fusion> fusion = std::make_shared<Fusion>();
  OneInput() {
    Value* x = fusion->add_tensor_input("x", DType::Float32, {2, 3});
    Value* s = fusion->add_scalar_input("s", ScalarKind::Int);
    fusion->add_output(fusion->add(OpKind::Mul, {x, s}));
  }
};

std::string error_of(CompiledFusion& f, const std::vector<Arg>& args) {
  try {
    f.run(args);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ExecutorArgs, WrongCount_NamesCounts) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  EXPECT_THAT(error_of(f, {}), HasSubstr("takes 2 argument(s), got 0"));
}

TEST(ExecutorArgs, WrongShape_NamesInputAndTypes) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  Tensor t = to_tensor(HostTensor::empty(DType::Float32, {2, 4}));
  EXPECT_THAT(error_of(f, {t, Scalar::from_int(2)}), HasSubstr("input 'x' expects f32[2, 3], got f32[2, 4]"));
}

TEST(ExecutorArgs, NumberForTensor_Rejected) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  EXPECT_THAT(error_of(f, {Scalar::from_int(1), Scalar::from_int(2)}), HasSubstr("input 'x' expects a tensor"));
}

TEST(ExecutorArgs, FloatForIntScalar_Rejected) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  Tensor t = to_tensor(HostTensor::empty(DType::Float32, {2, 3}));
  EXPECT_THAT(error_of(f, {t, Scalar::from_float(0.5)}), HasSubstr("input 's' expects a number of kind int, got float 0.5"));
}

TEST(ExecutorArgs, LayoutPastBuffer_Rejected) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  Tensor t = to_tensor(HostTensor::empty(DType::Float32, {2, 3}));
  t.layout.offset = 4;
  EXPECT_THAT(error_of(f, {t, Scalar::from_int(2)}), HasSubstr("reaches past its buffer of 24 bytes"));
}

TEST(ExecutorArgs, WrongDevice_Rejected) {
  OneInput p;
  CompiledFusion f(p.fusion, {}, nullptr);
  Tensor t = to_tensor(HostTensor::empty(DType::Float32, {2, 3}));
  t.device = Device::Cuda;
  EXPECT_THAT(error_of(f, {t, Scalar::from_int(2)}), HasSubstr("input 'x' is on cuda, but the fusion runs on cpu"));
}

}  // namespace
}  // namespace vf
