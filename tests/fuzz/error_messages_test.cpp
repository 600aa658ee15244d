// The example message of each error kind in docs/errors.md is the one the code gives today.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "frontend/trace_reader.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/executor.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

std::string errors_doc() {
  std::ifstream in(std::string(VF_SOURCE_DIR) + "/docs/errors.md");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The trace of docs/errors.md's trace-error example.
constexpr const char* kBadTrace =
    "def f(x):\n"
    "  # x: \"cpu f32[2, 3]\"\n"
    "  t0 = prims.transpose(x, (0, 0))  # t0: \"cpu f32[2, 2]\"\n"
    "  return t0\n";

TEST(ErrorsDoc, TraceErrorExample_IsReal) {
  try {
    read_trace(kBadTrace, "bad.py");
    FAIL() << "the trace read";
  } catch (const TraceError& e) {
    EXPECT_THAT(errors_doc(), HasSubstr(e.what()));
    EXPECT_EQ(e.line(), 3);
  }
}

TEST(ErrorsDoc, UserErrorExample_IsReal) {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::Float32, {2, 3});
  f->add_output(f->add(OpKind::Exp, {x}));
  CompiledFusion compiled(f, {}, nullptr);
  try {
    compiled.run({to_tensor(HostTensor::empty(DType::Float32, {3, 2}))});
    FAIL() << "a [3, 2] tensor was accepted for f32[2, 3]";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::User);
    EXPECT_THAT(errors_doc(), HasSubstr(e.what()));
  }
}

TEST(ErrorsDoc, DeviceErrorExamples_AreReal) {
  try {
    Storage huge(int64_t{1} << 52);
    FAIL() << "4 PiB of host memory was allocated";
  } catch (const DeviceError& e) {
    EXPECT_THAT(errors_doc(), HasSubstr(e.what()));
  }
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: the no-driver example cannot be produced";
  try {
    CudaBackend backend(0);
    FAIL() << "a CUDA backend was made without a device";
  } catch (const DeviceError& e) {
    EXPECT_THAT(errors_doc(), HasSubstr(e.what()));
  }
}

// Internal errors carry file and line of the check and a repro path, which differ per machine:
// the document shows their fixed parts.
TEST(ErrorsDoc, InternalErrorExample_HasFixedParts) {
  const std::string doc = errors_doc();
  EXPECT_THAT(doc, HasSubstr("internal error at "));
  EXPECT_THAT(doc, HasSubstr("(this is a viewfuse bug; please report it)"));
  EXPECT_THAT(doc, HasSubstr("\nrepro: "));
}

}  // namespace
}  // namespace vf
