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

// out = a * 0.5 + b over bf16 [rows, 256], into `fusion`.
void build_scale_add(Fusion& fusion, int64_t rows) {
  Value* a = fusion.add_tensor_input("a", DType::BFloat16, {rows, 256});
  Value* b = fusion.add_tensor_input("b", DType::BFloat16, {rows, 256});
  Value* half = fusion.add_constant(Scalar::from_float(0.5));
  fusion.add_output(fusion.add(OpKind::Add, {fusion.add(OpKind::Mul, {a, half}), b}));
}

// The scale-add at [64, 256]: a vector nest, whose blocks cover it exactly.
struct ScaleAdd {
  Fusion fusion;
  KernelSpec spec;
  ScaleAdd() {
    build_scale_add(fusion, 64);
    const Layout layout = Layout::contiguous({64, 256});
    spec = KernelSpec{&fusion, {layout, layout}, {layout}};
  }
};

// Launches `kernel` on seeded bf16 inputs of `rows` x 256 (the layout class of ScaleAdd's spec) and
// compares its output with the reference executor's, bit for bit.
void expect_scale_add(const PreparedKernel& kernel, int64_t rows) {
  const Layout layout = Layout::contiguous({rows, 256});
  std::vector<HostTensor> host;
  for (int i = 0; i < 2; ++i) {
    host.push_back(HostTensor::empty(DType::BFloat16, {rows, 256}));
    auto* p = reinterpret_cast<uint16_t*>(host.back().storage()->data());
    for (int64_t k = 0; k < rows * 256; ++k) p[k] = static_cast<uint16_t>(0x3f80 + (k * 7 + i * 13) % 127);
  }
  // The reference runs the program at this launch's size.
  Fusion sized;
  build_scale_add(sized, rows);
  const std::vector<HostTensor> expected = run_reference(sized, {host[0], host[1]});
  const int64_t bytes = rows * 256 * 2;
  DeviceBuffer da(bytes), db(bytes), dout(bytes);
  cuda_copy_to_device(da.data(), host[0].storage()->data(), bytes);
  cuda_copy_to_device(db.data(), host[1].storage()->data(), bytes);
  KernelBuffer inputs[] = {{da.data(), &layout}, {db.data(), &layout}};
  KernelBuffer outputs[] = {{dout.data(), &layout}};
  Scalar scalars[2] = {};
  kernel.launch(KernelArgs{inputs, scalars, outputs, nullptr});
  cuda_synchronize();
  std::vector<uint16_t> got(rows * 256);
  cuda_copy_to_host(got.data(), dout.data(), bytes);
  const auto* want = reinterpret_cast<const uint16_t*>(expected[0].storage()->data());
  for (int64_t k = 0; k < rows * 256; ++k) ASSERT_EQ(got[k], want[k]) << "rows " << rows << ", at " << k;
}

// ScaleAdd's kernel prepared on a CUDA backend without a disk cache, specializing in `mode`.
struct ScaleAddKernel {
  ScaleAdd program;
  CudaBackend backend;
  std::shared_ptr<const PreparedKernel> kernel;
  explicit ScaleAddKernel(SpecializeMode mode) : backend(0, fs::path(), mode), kernel(backend.prepare(program.spec)) {}
  const SpecializeStats& stats() const { return backend.specialize_stats(); }
};

TEST(CudaSpecialize, NowMode_FirstLaunchSpecializedAndOtherSizesGeneric) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  ScaleAddKernel k(SpecializeMode::Now);
  expect_scale_add(*k.kernel, 64);
  EXPECT_EQ(k.stats().made.load(), 1);
  EXPECT_EQ(k.stats().launches.load(), 1);
  EXPECT_EQ(k.backend.compile_count(), 1);
  EXPECT_EQ(k.stats().compiled.load(), 1);
  // Another size of the same layout class: the generic kernel, no compile.
  expect_scale_add(*k.kernel, 40);
  expect_scale_add(*k.kernel, 3);
  EXPECT_EQ(k.stats().launches.load(), 1);
  EXPECT_EQ(k.backend.compile_count(), 1);
  EXPECT_EQ(k.stats().made.load(), 1);
  expect_scale_add(*k.kernel, 64);
  EXPECT_EQ(k.stats().launches.load(), 2);
}

TEST(CudaSpecialize, BackgroundMode_SecondLaunchSpecializesWhileGenericRuns) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  ScaleAddKernel k(SpecializeMode::Background);
  expect_scale_add(*k.kernel, 64);
  EXPECT_EQ(k.stats().made.load(), 0);
  expect_scale_add(*k.kernel, 64);  // starts the specialization
  for (int i = 0; i < 600 && k.stats().made.load() == 0; ++i) usleep(50 * 1000);
  ASSERT_EQ(k.stats().made.load(), 1) << "no specialized kernel after 30 s";
  expect_scale_add(*k.kernel, 64);
  EXPECT_EQ(k.stats().launches.load(), 1);
  EXPECT_EQ(k.stats().failures.load(), 0);
  EXPECT_EQ(k.backend.compile_count(), 1);
}

TEST(CudaSpecialize, OffMode_NeverSpecializes) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  ScaleAddKernel k(SpecializeMode::Off);
  for (int i = 0; i < 3; ++i) expect_scale_add(*k.kernel, 64);
  EXPECT_EQ(k.stats().made.load(), 0);
  EXPECT_EQ(k.stats().launches.load(), 0);
}

}  // namespace
}  // namespace vf
