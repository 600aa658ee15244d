// Generated CUDA kernels run on a GPU (NVRTC + driver API) give the CPU backend's results.
// Skipped when no CUDA device is present.
#include <cuda.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cstdio>
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

// Flat nests: the 16-byte vector path (aligned offsets) and the scalar fallback (offset 1), with
// an element count that leaves a tail.
TEST(CodegenGpu, FlatVectorPathAndTail_MatchCpu) {
  for (int64_t offset : {0, 8, 1}) {
    Fusion f;
    Value* a = f.add_tensor_input("a", DType::BFloat16, {1001});
    Value* b = f.add_tensor_input("b", DType::Float32, {1001});
    Value* sum = f.add(OpKind::Add, {f.add(OpKind::ConvertElementType, {a}, CastAttrs{DType::Float32}), b});
    f.add_output(sum);
    f.add_output(f.add(OpKind::ConvertElementType, {sum}, CastAttrs{DType::Float16}));
    HostTensor ta = tensor_with_layout(DType::BFloat16, Layout::contiguous({1001}, offset));
    HostTensor tb = tensor_with_layout(DType::Float32, Layout::contiguous({1001}, offset));
    std::vector<double> va = values(random_tensor(DType::BFloat16, {1001}, 45));
    std::vector<double> vb = values(random_tensor(DType::Float32, {1001}, 46));
    test::fill(ta, [&](int64_t k) { return va[k]; });
    test::fill(tb, [&](int64_t k) { return vb[k]; });
    SCOPED_TRACE(offset);
    expect_gpu_matches_cpu(f, {ta, tb});
  }
}

// Transpose-like nests take the shared-memory tiled schedule.
TEST(CodegenGpu, TiledTranspose_MatchesCpu) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::BFloat16, {2, 130, 33, 7});
  Value* y = f.add_tensor_input("y", DType::BFloat16, {2, 7, 33, 130});
  Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 3, 2, 1}});
  f.add_output(f.add(OpKind::Add, {t, y}));
  f.add_output(f.add(OpKind::Sub, {t, y}));
  KernelSpec spec{&f, {Layout::contiguous({2, 130, 33, 7}), Layout::contiguous({2, 7, 33, 130})},
                  {Layout::contiguous({2, 7, 33, 130}), Layout::contiguous({2, 7, 33, 130})}};
  EXPECT_NE(generate_kernel(spec, Target::Cuda).source.find("__shared__"), std::string::npos);
  expect_gpu_matches_cpu(f, {random_tensor(DType::BFloat16, {2, 130, 33, 7}, 49),
                             random_tensor(DType::BFloat16, {2, 7, 33, 130}, 50)});
  Fusion g;
  Value* a = g.add_tensor_input("a", DType::Float32, {1000, 700});
  g.add_output(g.add(OpKind::Exp, {g.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}})}));
  expect_gpu_matches_cpu(g, {random_tensor(DType::Float32, {1000, 700}, 51)});
}

TEST(CodegenGpu, ElementwiseOpsAndCasts_MatchCpu) {
  const OpKind unary[] = {OpKind::Abs, OpKind::Neg, OpKind::Exp, OpKind::Exp2, OpKind::Expm1, OpKind::Log,
                          OpKind::Log1p, OpKind::Log2, OpKind::Log10, OpKind::Sqrt, OpKind::Rsqrt,
                          OpKind::Reciprocal, OpKind::Sin, OpKind::Cos, OpKind::Tan, OpKind::Tanh, OpKind::Sinh,
                          OpKind::Cosh, OpKind::Asin, OpKind::Acos, OpKind::Atan, OpKind::Erf, OpKind::Erfc,
                          OpKind::Erfinv, OpKind::Sign, OpKind::Floor, OpKind::Ceil, OpKind::Round, OpKind::Trunc,
                          OpKind::IsFinite, OpKind::Signbit};
  const DType all[] = {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32,
                       DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  for (DType dtype : all) {
    Fusion f;
    Value* a = f.add_tensor_input("a", dtype, {257});
    Value* b = f.add_tensor_input("b", dtype, {257});
    if (is_floating(dtype)) {
      for (OpKind op : unary) f.add_output(f.add(op, {a}));
      for (OpKind op : {OpKind::Pow, OpKind::Atan2, OpKind::Div, OpKind::Maximum, OpKind::Remainder, OpKind::Fmod})
        f.add_output(f.add(op, {a, b}));
    } else if (!is_bool(dtype)) {
      for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Remainder, OpKind::Fmod,
                        OpKind::BitwiseXor, OpKind::Minimum})
        f.add_output(f.add(op, {a, b}));
    }
    for (DType to : all) f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{to}));
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_gpu_matches_cpu(f, {random_tensor(dtype, {257}, 47), random_tensor(dtype, {257}, 48)});
  }
}

// Kernel time of a few reference cases (run with --gtest_also_run_disabled_tests); prints only.
double time_kernel_us(const Fusion& f, const std::vector<Layout>& in_layouts) {
  CUcontext ctx;
  int sms;
  if (!gpu_available(&ctx, &sms)) return -1;
  KernelSpec spec{&f, in_layouts, {}};
  std::vector<CUdeviceptr> bufs;
  std::vector<KernelBuffer> ins, outs;
  for (size_t i = 0; i < in_layouts.size(); ++i) {
    CUdeviceptr p;
    cuMemAlloc(&p, in_layouts[i].storage_extent() * dtype_size(f.inputs()[i]->dtype));
    bufs.push_back(p);
  }
  for (const Value* v : f.outputs()) spec.output_layouts.push_back(Layout::contiguous(v->shape));
  for (size_t o = 0; o < spec.output_layouts.size(); ++o) {
    CUdeviceptr p;
    cuMemAlloc(&p, spec.output_layouts[o].numel() * dtype_size(f.outputs()[o]->dtype));
    bufs.push_back(p);
  }
  for (size_t i = 0; i < in_layouts.size(); ++i) ins.push_back({reinterpret_cast<void*>(bufs[i]), &spec.input_layouts[i]});
  for (size_t o = 0; o < spec.output_layouts.size(); ++o)
    outs.push_back({reinterpret_cast<void*>(bufs[in_layouts.size() + o]), &spec.output_layouts[o]});
  GeneratedKernel k = generate_kernel(spec, Target::Cuda);
  std::vector<char> cubin = compile_cubin(k.source);
  CUmodule module;
  cuModuleLoadData(&module, cubin.data());
  CUfunction fn;
  cuModuleGetFunction(&fn, module, k.entry.c_str());
  std::vector<Scalar> scalars(ins.size());
  LaunchBlock block;
  pack_launch(k, KernelArgs{ins, scalars, outs, nullptr}, sms, block);
  void* params[] = {block.args.data()};
  CUevent start, stop;
  cuEventCreate(&start, 0);
  cuEventCreate(&stop, 0);
  for (int i = 0; i < 3; ++i) cuLaunchKernel(fn, block.grid, 1, 1, block.block, 1, 1, 0, nullptr, params, nullptr);
  const int reps = 20;
  cuEventRecord(start, nullptr);
  for (int i = 0; i < reps; ++i) cuLaunchKernel(fn, block.grid, 1, 1, block.block, 1, 1, 0, nullptr, params, nullptr);
  cuEventRecord(stop, nullptr);
  cuEventSynchronize(stop);
  float ms = 0;
  cuEventElapsedTime(&ms, start, stop);
  for (auto p : bufs) cuMemFree(p);
  cuModuleUnload(module);
  return 1000.0 * ms / reps;
}

TEST(CodegenGpu, DISABLED_Timings) {
  {
    Fusion f;
    Value* a = f.add_tensor_input("a", DType::Float32, {8192, 8192});
    Value* b = f.add_tensor_input("b", DType::Float32, {8192, 8192});
    f.add_output(f.add(OpKind::Add, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}), b}));
    std::printf("transpose2d + add f32 [8192, 8192]: %.1f us\n",
                time_kernel_us(f, {Layout::contiguous({8192, 8192}), Layout::contiguous({8192, 8192})}));
  }
  {
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::BFloat16, {16, 32, 2048, 128});
    Value* s = f.add(OpKind::Add, {f.add(OpKind::Mul, {x, f.add_constant(Scalar::from_float(0.5))}),
                                   f.add_constant(Scalar::from_float(1.0))});
    Value* t = f.add(OpKind::Transpose, {s}, PermuteAttrs{{0, 2, 1, 3}});
    f.add_output(f.add(OpKind::Reshape, {t}, ReshapeAttrs{{16, 2048, 4096}}));
    std::printf("merge heads producer bf16 [16, 32, 2048, 128]: %.1f us\n",
                time_kernel_us(f, {Layout::contiguous({16, 32, 2048, 128})}));
  }
  {
    Fusion f;
    Value* a = f.add_tensor_input("a", DType::BFloat16, {16384, 4096});
    Value* b = f.add_tensor_input("b", DType::BFloat16, {16384, 4096});
    f.add_output(f.add(OpKind::Mul, {f.add(OpKind::Add, {a, b}), b}));
    std::printf("flat (a + b) * b bf16 [16384, 4096]: %.1f us\n",
                time_kernel_us(f, {Layout::contiguous({16384, 4096}), Layout::contiguous({16384, 4096})}));
  }
}

}  // namespace
}  // namespace vf
