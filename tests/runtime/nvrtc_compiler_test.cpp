// Tests of NVRTC compilation: CUBIN for sm_90 without a GPU, compile errors, architecture choice.
#include "runtime/nvrtc_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"
#include "base/error.h"
#include "runtime/cuda_api.h"
#include "saxpy_kernel.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

using test::kSaxpy;

TEST(NvrtcCompile, Saxpy_Sm90Cubin) {
  VF_TEST_REQUIRE_NVRTC();
  CompiledCuda compiled = nvrtc_compile(kSaxpy, "vf_test_saxpy", 9, 0);
  EXPECT_TRUE(compiled.is_cubin);
  EXPECT_EQ(compiled.arch, "sm_90");
  ASSERT_GE(compiled.image.size(), 64u);
  // An ELF file: magic, 64-bit class, and the machine field EM_CUDA (190).
  EXPECT_EQ(compiled.image[0], std::byte{0x7f});
  EXPECT_EQ(compiled.image[1], std::byte{'E'});
  EXPECT_EQ(compiled.image[2], std::byte{'L'});
  EXPECT_EQ(compiled.image[3], std::byte{'F'});
  EXPECT_EQ(compiled.image[4], std::byte{2});
  EXPECT_EQ(static_cast<int>(compiled.image[18]) | static_cast<int>(compiled.image[19]) << 8, 190);
  // The entry point keeps its unmangled name.
  std::string text(reinterpret_cast<const char*>(compiled.image.data()), compiled.image.size());
  EXPECT_NE(text.find("vf_test_saxpy"), std::string::npos);
}

TEST(NvrtcCompile, SameSourceTwice_SameBytes) {
  VF_TEST_REQUIRE_NVRTC();
  EXPECT_EQ(nvrtc_compile(kSaxpy, "vf_test_saxpy", 9, 0).image, nvrtc_compile(kSaxpy, "vf_test_saxpy", 9, 0).image);
}

TEST(NvrtcCompile, LineInfo_Compiles) {
  VF_TEST_REQUIRE_NVRTC();
  CompiledCuda compiled = nvrtc_compile(kSaxpy, "vf_test_saxpy", 8, 0, {.line_info = true});
  EXPECT_EQ(compiled.arch, "sm_80");
  EXPECT_EQ(compiled.image[0], std::byte{0x7f});
}

TEST(NvrtcCompile, SyntaxError_LogAndSavedSource) {
  VF_TEST_REQUIRE_NVRTC();
  const std::string bad = "extern \"C\" __global__ void vf_test_bad(int* p) { p[0] = undeclared_name; }\n";
  try {
    nvrtc_compile(bad, "vf_test_bad", 9, 0);
    FAIL() << "a source with an undeclared name compiled";
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("NVRTC failed to compile kernel vf_test_bad for sm_90"));
    EXPECT_THAT(message, HasSubstr("undeclared_name"));  // from NVRTC's log
    const std::string marker = "the failing source is saved at ";
    size_t at = message.find(marker);
    ASSERT_NE(at, std::string::npos) << message;
    std::filesystem::path path = message.substr(at + marker.size());
    std::ifstream in(path);
    std::string saved((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(saved, bad);
    std::filesystem::remove(path);
  }
}

TEST(NvrtcVersion, NamesMajorMinor) {
  VF_TEST_REQUIRE_NVRTC();
  EXPECT_THAT(nvrtc_version_string(), ::testing::MatchesRegex("nvrtc [0-9]+\\.[0-9]+"));
}

TEST(NvrtcTarget, SupportedArch_Cubin) {
  NvrtcTarget target = nvrtc_target_for(9, 0, {75, 80, 86, 89, 90, 100});
  EXPECT_EQ(target.arch, 90);
  EXPECT_TRUE(target.cubin);
}

TEST(NvrtcTarget, UnknownSupportList_DeviceArchCubin) {
  NvrtcTarget target = nvrtc_target_for(8, 6, {});
  EXPECT_EQ(target.arch, 86);
  EXPECT_TRUE(target.cubin);
}

TEST(NvrtcTarget, DeviceNewerThanNvrtc_PtxForNewestBelow) {
  NvrtcTarget target = nvrtc_target_for(12, 0, {75, 80, 90, 100});
  EXPECT_EQ(target.arch, 100);
  EXPECT_FALSE(target.cubin);
}

TEST(NvrtcTarget, DeviceOlderThanNvrtc_DeviceError) {
  VF_TEST_REQUIRE_NVRTC();  // the message names the NVRTC version
  try {
    nvrtc_target_for(6, 0, {75, 80, 90});
    FAIL() << "sm_60 accepted by an NVRTC whose oldest architecture is sm_75";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the GPU (sm_60) is older than every architecture"));
    EXPECT_THAT(e.what(), HasSubstr("the oldest is sm_75"));
  }
}

}  // namespace
}  // namespace vf
