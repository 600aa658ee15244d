// Tests of CudaBackend on kernels from generate_kernel, against the reference executor (need a GPU).
#include "runtime/cuda_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_support.h"
#include "base/error.h"
#include "codegen/generate_kernel.h"
#include "ir/ir.h"
#include "layout/host_tensor.h"
#include "reference/reference_executor.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

// out = transpose(a) + b with a [7, 5] and b [5, 7], float32.
struct TransposeAdd {
  Fusion fusion;
  KernelSpec spec;
  TransposeAdd() {
    Value* a = fusion.add_tensor_input("a", DType::Float32, {7, 5});
    Value* b = fusion.add_tensor_input("b", DType::Float32, {5, 7});
    Value* t = fusion.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}});
    fusion.add_output(fusion.add(OpKind::Add, {t, b}));
    spec = KernelSpec{&fusion, {Layout::contiguous({7, 5}), Layout::contiguous({5, 7})}, {Layout::contiguous({5, 7})}};
  }
};

// Needs NVRTC only: the generated CUDA source compiles to sm_90 machine code.
TEST(CudaGeneratedSource, TransposeAdd_CompilesForSm90) {
  VF_TEST_REQUIRE_NVRTC();
  TransposeAdd program;
  GeneratedKernel generated = generate_kernel(program.spec, Target::Cuda);
  CompiledCuda compiled = nvrtc_compile(generated.source, generated.entry, 9, 0);
  EXPECT_TRUE(compiled.is_cubin);
  ASSERT_GE(compiled.image.size(), 4u);
  EXPECT_EQ(compiled.image[0], std::byte{0x7f});
  std::string text(reinterpret_cast<const char*>(compiled.image.data()), compiled.image.size());
  EXPECT_NE(text.find(generated.entry), std::string::npos) << "entry " << generated.entry << " not in the CUBIN";
}

TEST(CudaBackend, NoDevice_DeviceError) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(CudaBackend(0, fs::path()), DeviceError);
}

// A generated kernel: out = transpose(a) + b on [5, 7] float32, against the reference executor.
TEST(CudaBackend, TransposeAdd_MatchesReference) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  TransposeAdd program;
  const Fusion& fusion = program.fusion;
  const KernelSpec& spec = program.spec;

  HostTensor ha = HostTensor::empty(DType::Float32, {7, 5});
  HostTensor hb = HostTensor::empty(DType::Float32, {5, 7});
  float* pa = reinterpret_cast<float*>(ha.storage()->data());
  float* pb = reinterpret_cast<float*>(hb.storage()->data());
  for (int i = 0; i < 35; ++i) {
    pa[i] = static_cast<float>(i) * 0.25f;
    pb[i] = 100.0f - static_cast<float>(i);
  }
  std::vector<HostTensor> expected = run_reference(fusion, {ha, hb});

  CudaBackend backend(0, fs::path());
  std::shared_ptr<const PreparedKernel> kernel = backend.prepare(spec);
  EXPECT_EQ(backend.compile_count(), 1);
  EXPECT_NE(backend.prepare(spec), nullptr);
  EXPECT_EQ(backend.compile_count(), 1);  // the second prepare hits the in-memory cache

  DeviceBuffer da(35 * 4), db(35 * 4), dout(35 * 4);
  cuda_copy_to_device(da.data(), pa, 35 * 4);
  cuda_copy_to_device(db.data(), pb, 35 * 4);
  KernelBuffer inputs[] = {{da.data(), &spec.input_layouts[0]}, {db.data(), &spec.input_layouts[1]}};
  KernelBuffer outputs[] = {{dout.data(), &spec.output_layouts[0]}};
  Scalar scalars[2] = {};
  kernel->launch(KernelArgs{inputs, scalars, outputs, nullptr});
  cuda_synchronize();
  std::vector<float> got(35);
  cuda_copy_to_host(got.data(), dout.data(), 35 * 4);
  const float* want = reinterpret_cast<const float*>(expected[0].storage()->data());
  for (int i = 0; i < 35; ++i) EXPECT_EQ(got[i], want[i]) << "at " << i;
}

TEST(CudaBackend, DumpKernels_WritesSource) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const fs::path dir = fs::temp_directory_path() / ("vf_dump_cuda_" + std::to_string(::getpid()));
  ::setenv("VF_DUMP_KERNELS", dir.c_str(), 1);
  TransposeAdd program;
  CudaBackend backend(0, fs::path());
  backend.prepare(program.spec);
  ::unsetenv("VF_DUMP_KERNELS");
  const std::string source = generate_kernel(program.spec, Target::Cuda).source;
  int dumped = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().extension(), ".cu");
    std::ifstream in(entry.path());
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), source);
    ++dumped;
  }
  EXPECT_EQ(dumped, 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vf
