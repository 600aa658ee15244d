// Internal errors escaping compile or execution write a repro file that the trace reader reads
// back, with the input layouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/trace_reader.h"
#include "ir/print_trace.h"
#include "runtime/executor.h"
#include "runtime/repro.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

// A backend whose compiler has a bug: every prepare breaks an invariant.
class BrokenBackend : public Backend {
 public:
  Target target() const override { return Target::Cpu; }
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec&, const KernelIR&) override {
    VF_INTERNAL_CHECK(false, "a deliberately broken backend");
    return nullptr;
  }
  int64_t compile_count() const override { return 0; }
};

// exp(x.T) over a transposed, offset input: one kernel segment.
std::shared_ptr<Fusion> transposed_exp() {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::Float32, {3, 4});
  Value* t = f->add(OpKind::Transpose, {x}, PermuteAttrs{{1, 0}});
  f->add_output(f->add(OpKind::Exp, {t}));
  return f;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

class ReproTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("vf_repro_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    setenv("VF_REPRO_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("VF_REPRO_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(ReproTest, InternalErrorInCompile_WritesReadableRepro) {
  auto fusion = transposed_exp();
  CompiledFusion compiled(fusion, {}, std::make_shared<BrokenBackend>());
  // x: [3, 4] stored column-major at offset 2.
  HostTensor storage = HostTensor::empty(DType::Float32, {14});
  Layout layout{{3, 4}, {1, 3}, 2};
  Tensor x = to_tensor(HostTensor::view_of(DType::Float32, layout, storage.storage()));
  std::string message;
  try {
    compiled.run({x});
  } catch (const InternalError& e) {
    message = e.what();
  }
  EXPECT_THAT(message, HasSubstr("a deliberately broken backend"));
  const size_t at = message.find("\nrepro: ");
  ASSERT_NE(at, std::string::npos) << message;
  const std::string path = message.substr(at + 8);
  EXPECT_EQ(std::filesystem::path(path).parent_path(), dir_);
  const std::string text = read_text(path);
  // The repro is a trace of the same fusion, with the input's layout and the error in comments.
  Fusion back = read_trace(text, path);
  EXPECT_EQ(print_trace(back), print_trace(*fusion));
  const std::vector<Layout> layouts = read_repro_layouts(text, back);
  ASSERT_EQ(layouts.size(), 1u);
  EXPECT_EQ(layouts[0], layout);
  EXPECT_THAT(text, HasSubstr("# error: internal error at"));
}

TEST_F(ReproTest, InternalErrorInPlanFor_WritesRepro) {
  CompiledFusion compiled(transposed_exp(), {}, std::make_shared<BrokenBackend>());
  Tensor x = to_tensor(HostTensor::empty(DType::Float32, {3, 4}));
  try {
    compiled.plan_for({x});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("\nrepro: " + dir_.string()));
  }
}

TEST_F(ReproTest, UserError_NoRepro) {
  CompiledFusion compiled(transposed_exp(), {}, std::make_shared<BrokenBackend>());
  Tensor x = to_tensor(HostTensor::empty(DType::Float32, {4, 3}));
  try {
    compiled.run({x});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    FAIL() << "internal error for a wrong shape: " << e.what();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("repro")));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(ReproTest, UnwritableDirectory_SaysSoInMessage) {
  setenv("VF_REPRO_DIR", "/proc/viewfuse-cannot-write-here", 1);
  CompiledFusion compiled(transposed_exp(), {}, std::make_shared<BrokenBackend>());
  Tensor x = to_tensor(HostTensor::empty(DType::Float32, {3, 4}));
  try {
    compiled.run({x});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("repro: (could not be written under /proc/viewfuse-cannot-write-here)"));
  }
}

TEST(ReproLayouts, MalformedLine_UserErrorNamesLine) {
  auto fusion = transposed_exp();
  EXPECT_THAT([&] { read_repro_layouts("# viewfuse repro\n# layout x: sizes [3, 4] strides [1]\n", *fusion); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("repro line 2")));
  EXPECT_THAT([&] { read_repro_layouts("# layout x: sizes [4, 3] strides [3, 1] offset 0\n", *fusion); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("does not fit input 'x'")));
  EXPECT_THAT([&] { read_repro_layouts("# layout y: sizes [3, 4] strides [4, 1] offset 0\n", *fusion); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("'y', which is not an input")));
}

}  // namespace
}  // namespace vf
