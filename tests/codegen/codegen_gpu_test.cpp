// Generated CUDA kernels run on a GPU (NVRTC + driver API) give the CPU backend's results.
// Skipped when no CUDA device is present.
#include <cuda.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <functional>

#include "codegen/generate_kernel.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"

namespace vf {
namespace {

using test::permuted_layout;
using test::tensor_with_layout;
using test::values;

bool gpu_available(CUcontext* ctx, int* sm_count) {
  static CUcontext context = nullptr;
  static int sms = 0;
  static bool ok = [] {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    CUdevice dev;
    if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return false;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    return cuDevicePrimaryCtxRetain(&context, dev) == CUDA_SUCCESS && cuCtxSetCurrent(context) == CUDA_SUCCESS;
  }();
  *ctx = context;
  *sm_count = sms;
  return ok;
}

std::vector<char> compile_cubin(const std::string& source) {
  nvrtcProgram prog;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "k.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* opts[] = {"--gpu-architecture=sm_90", "-default-device", "--std=c++17"};
  EXPECT_EQ(nvrtcCompileProgram(prog, 3, opts), NVRTC_SUCCESS);
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return cubin;
}

// Runs the fusion on the GPU and on the CPU backend; compares outputs.
void expect_gpu_matches_cpu(const Fusion& f, const std::vector<HostTensor>& inputs, std::vector<Layout> out_layouts = {}) {
  CUcontext ctx;
  int sms;
  if (!gpu_available(&ctx, &sms)) GTEST_SKIP() << "no CUDA device";
  static CpuBackend cpu;
  std::vector<HostTensor> expected = test::run_cpu(cpu, f, inputs, out_layouts);
  KernelSpec spec{&f, {}, {}};
  std::vector<CUdeviceptr> dev_in, dev_out;
  std::vector<KernelBuffer> in_bufs, out_bufs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    spec.input_layouts.push_back(inputs[i].layout());
    CUdeviceptr p = 0;
    const size_t bytes = std::max<int64_t>(inputs[i].storage()->nbytes(), 16);
    ASSERT_EQ(cuMemAlloc(&p, bytes), CUDA_SUCCESS);
    cuMemcpyHtoD(p, inputs[i].storage()->data(), inputs[i].storage()->nbytes());
    dev_in.push_back(p);
  }
  std::vector<HostTensor> actual;
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    const Layout l = o < out_layouts.size() ? out_layouts[o] : Layout::contiguous(f.outputs()[o]->shape);
    spec.output_layouts.push_back(l);
    actual.push_back(tensor_with_layout(f.outputs()[o]->dtype, l));
    CUdeviceptr p = 0;
    ASSERT_EQ(cuMemAlloc(&p, std::max<int64_t>(actual.back().storage()->nbytes(), 16)), CUDA_SUCCESS);
    cuMemsetD8(p, 0, actual.back().storage()->nbytes());
    dev_out.push_back(p);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    in_bufs.push_back({reinterpret_cast<void*>(dev_in[i]), &spec.input_layouts[i]});
  for (size_t o = 0; o < actual.size(); ++o)
    out_bufs.push_back({reinterpret_cast<void*>(dev_out[o]), &spec.output_layouts[o]});
  GeneratedKernel k = generate_kernel(spec, Target::Cuda);
  std::vector<char> cubin = compile_cubin(k.source);
  CUmodule module;
  ASSERT_EQ(cuModuleLoadData(&module, cubin.data()), CUDA_SUCCESS);
  CUfunction fn;
  ASSERT_EQ(cuModuleGetFunction(&fn, module, k.entry.c_str()), CUDA_SUCCESS);
  std::vector<Scalar> scalars(inputs.size());
  KernelArgs args{in_bufs, scalars, out_bufs, nullptr};
  LaunchBlock block;
  pack_launch(k, args, sms, block);
  void* params[] = {block.args.data()};
  ASSERT_EQ(cuLaunchKernel(fn, block.grid, 1, 1, block.block, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  for (size_t o = 0; o < actual.size(); ++o) {
    cuMemcpyDtoH(actual[o].storage()->data(), dev_out[o], actual[o].storage()->nbytes());
    Comparison c = compare_tensors(actual[o], expected[o], default_tolerance(expected[o].dtype()));
    EXPECT_TRUE(c.ok) << "output " << o << ": " << c.first_mismatch;
  }
  for (auto p : dev_in) cuMemFree(p);
  for (auto p : dev_out) cuMemFree(p);
  cuModuleUnload(module);
}

TEST(CodegenGpu, SeedAndMovementOps_MatchCpu) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::BFloat16, {2, 16, 8, 16});
  Value* t3 = f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}})}, ReshapeAttrs{{2, 8, 256}});
  f.add_output(f.add(OpKind::Mul, {t3, t3}));
  Value* p = f.add(OpKind::Pad, {x, f.add_constant(Scalar::from_float(-2.0))},
                   PadAttrs{{{0, 0, 0}, {-1, 2, 1}, {1, 1, 0}, {0, -3, 0}}});
  f.add_output(f.add(OpKind::Flip, {p}, DimsAttrs{{1, 3}}));
  f.add_output(f.add(OpKind::Cat, {x, x}, CatAttrs{2}));
  f.add_output(f.add(OpKind::ConvertElementType, {f.add(OpKind::Exp, {x})}, CastAttrs{DType::Int16}));
  expect_gpu_matches_cpu(f, {random_tensor(DType::BFloat16, {2, 16, 8, 16}, 41)});
  HostTensor permuted = tensor_with_layout(DType::BFloat16, permuted_layout({2, 16, 8, 16}, {3, 1, 0, 2}, 5));
  HostTensor r = random_tensor(DType::BFloat16, {2, 16, 8, 16}, 42);
  std::vector<double> v = values(r);
  int64_t k = 0;
  test::fill(permuted, [&](int64_t) { return v[k++]; });
  expect_gpu_matches_cpu(f, {permuted});
}

TEST(CodegenGpu, IntegerOpsAndLargeExtent_MatchCpu) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int32, {1000, 700});
  Value* b = f.add_tensor_input("b", DType::Int32, {1000, 700});
  f.add_output(f.add(OpKind::Div, {a, b}));
  f.add_output(f.add(OpKind::Remainder, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}),
                                         f.add(OpKind::Transpose, {b}, PermuteAttrs{{1, 0}})}));
  f.add_output(f.add(OpKind::Iota, {}, IotaAttrs{3000, -5, 7, DType::Float32}));
  expect_gpu_matches_cpu(f, {random_tensor(DType::Int32, {1000, 700}, 43), random_tensor(DType::Int32, {1000, 700}, 44)});
}

}  // namespace
}  // namespace vf
