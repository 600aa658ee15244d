// Generated CUDA kernels run on a GPU through CudaBackend give the CPU backend's results.
// Each test skips, with the reason, when there is no CUDA device or NVRTC cannot be loaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include "codegen/generate_kernel.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"

namespace vf {
namespace {

using test::permuted_layout;
using test::tensor_with_layout;
using test::values;

// One backend for the whole binary, without a disk cache so that every kernel is compiled here.
CudaBackend& gpu_backend() {
  static CudaBackend backend(0, std::filesystem::path());
  return backend;
}

// Runs the fusion on the GPU and on the CPU backend; compares outputs. Inputs are copied to the
// device whole (storage and layout offset as on the host); outputs start zeroed.
void expect_gpu_matches_cpu(const Fusion& f, const std::vector<HostTensor>& inputs, std::vector<Layout> out_layouts = {}) {
  static CpuBackend cpu;
  std::vector<HostTensor> expected = test::run_cpu(cpu, f, inputs, out_layouts);
  KernelSpec spec{&f, {}, {}};
  std::vector<DeviceBuffer> dev_in, dev_out;
  for (const HostTensor& t : inputs) {
    spec.input_layouts.push_back(t.layout());
    dev_in.emplace_back(t.storage()->nbytes());
    cuda_copy_to_device(dev_in.back().data(), t.storage()->data(), t.storage()->nbytes());
  }
  std::vector<HostTensor> actual;
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    const Layout l = o < out_layouts.size() ? out_layouts[o] : Layout::contiguous(f.outputs()[o]->shape);
    spec.output_layouts.push_back(l);
    actual.push_back(tensor_with_layout(f.outputs()[o]->dtype, l));
    dev_out.emplace_back(actual.back().storage()->nbytes());
    cuda_memset(dev_out.back().data(), 0, dev_out.back().bytes());
  }
  std::vector<KernelBuffer> in_bufs, out_bufs;
  for (size_t i = 0; i < inputs.size(); ++i) in_bufs.push_back({dev_in[i].data(), &spec.input_layouts[i]});
  for (size_t o = 0; o < actual.size(); ++o) out_bufs.push_back({dev_out[o].data(), &spec.output_layouts[o]});
  std::shared_ptr<const PreparedKernel> kernel = gpu_backend().prepare(spec);
  std::vector<Scalar> scalars(inputs.size());
  kernel->launch(KernelArgs{in_bufs, scalars, out_bufs, nullptr});
  cuda_synchronize();
  for (size_t o = 0; o < actual.size(); ++o) {
    cuda_copy_to_host(actual[o].storage()->data(), dev_out[o].data(), dev_out[o].bytes());
    Comparison c = compare_tensors(actual[o], expected[o], default_tolerance(expected[o].dtype()));
    EXPECT_TRUE(c.ok) << "output " << o << ": " << c.first_mismatch;
  }
}

TEST(CodegenGpu, SeedAndMovementOps_MatchCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::BFloat16, {2, 16, 8, 16});
  Value* t3 = f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}})}, ReshapeAttrs{{2, 8, 256}});
  f.add_output(f.add(OpKind::Mul, {t3, t3}));
  Value* p = f.add(OpKind::Pad, {x, f.add_constant(Scalar::from_float(-2.0))},
                   PadAttrs{{{0, 0, 0}, {-1, 2, 1}, {1, 1, 0}, {0, -3, 0}}});
  f.add_output(f.add(OpKind::Flip, {p}, DimsAttrs{{1, 3}}));
  f.add_output(f.add(OpKind::Cat, {x, x}, AxisAttrs{2}));
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
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
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
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
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

// A rotate-half (RoPE's cat of neg(x[..., h:]) and x[..., :h]) of rows whose halves are multiples
// of the pack (each pack from one source, loaded whole), of rows whose halves are not (loaded
// element by element), and of a misaligned input (each pack element by element, its guard once).
Fusion rotate_half(DType dtype, int64_t rows, int64_t half) {
  Fusion f;
  Value* x = f.add_tensor_input("x", dtype, {rows, 2 * half});
  Value* c = f.add_tensor_input("c", dtype, {2 * half});
  Value* lo = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0}, {rows, half}, {1, 1}});
  Value* hi = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, half}, {rows, 2 * half}, {1, 1}});
  Value* rot = f.add(OpKind::Cat, {f.add(OpKind::Neg, {hi}), lo}, AxisAttrs{1});
  Value* cb = f.add(OpKind::BroadcastInDim, {c}, BroadcastAttrs{{rows, 2 * half}, {1}});
  f.add_output(f.add(OpKind::Add, {f.add(OpKind::Mul, {x, cb}), rot}));
  return f;
}

TEST(CodegenGpu, RotateHalfCat_MatchesCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  for (DType dtype : {DType::BFloat16, DType::Float32}) {
    for (int64_t half : {64, 12}) {
      for (int64_t offset : {0, 1}) {
        SCOPED_TRACE(std::string(dtype_short_name(dtype)) + " half " + std::to_string(half) + " offset " +
                     std::to_string(offset));
        Fusion f = rotate_half(dtype, 37, half);
        HostTensor x = tensor_with_layout(dtype, Layout::contiguous({37, 2 * half}, offset));
        std::vector<double> v = values(random_tensor(dtype, {37, 2 * half}, 52));
        test::fill(x, [&](int64_t k) { return v[k]; });
        expect_gpu_matches_cpu(f, {x, random_tensor(dtype, {2 * half}, 53)});
      }
    }
  }
}

// The merge-heads permute in the row-vector schedule, whose packs' alignment is tested once per
// nest: aligned inputs (offset 0 or 8, rows of 24) take the vector loop; an odd offset or a row
// stride of 28 (not a multiple of the pack) sends the whole nest to the plain loop.
TEST(CodegenGpu, MergeHeadsAlignedOrNot_MatchCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const Shape shape{2, 3, 5, 24};
  for (const auto& [offset, row_stride] : std::vector<std::pair<int64_t, int64_t>>{{0, 24}, {8, 24}, {1, 24}, {0, 28}}) {
    SCOPED_TRACE("offset " + std::to_string(offset) + ", row stride " + std::to_string(row_stride));
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::BFloat16, shape);
    Value* y = f.add(OpKind::Add, {f.add(OpKind::Mul, {x, f.add_constant(Scalar::from_float(0.125))}),
                                   f.add_constant(Scalar::from_float(1.0))});
    Value* t = f.add(OpKind::Transpose, {y}, PermuteAttrs{{0, 2, 1, 3}});
    f.add_output(f.add(OpKind::Reshape, {t}, ReshapeAttrs{{2, 5, 3 * 24}}));
    Layout l = Layout::contiguous(shape, offset);
    l.strides = {3 * 5 * row_stride, 5 * row_stride, row_stride, 1};
    HostTensor in = tensor_with_layout(DType::BFloat16, l);
    test::fill(in, [](int64_t k) { return static_cast<double>((k * 7) % 23) - 11.0; });
    expect_gpu_matches_cpu(f, {in});
  }
}

// The row tile of the row-vector schedule (runs of 8 rows of the permuted load's dim S after the
// innermost dim) over the merge-heads permute: S a multiple of 8 (tiled), not (plain order), and
// 64-bit index math (a size-1 dim's stride of 2^31); and a 3-D permute whose tile dim is the
// outermost one.
TEST(CodegenGpu, RowTiledSteps_MatchCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const int64_t big = int64_t{1} << 31;
  for (const auto& [shape, strides] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{2, 3, 16, 24}, {}}, {{2, 3, 12, 24}, {}}, {{1, 3, 16, 24}, {big, 16 * 24, 24, 1}}}) {
    SCOPED_TRACE(shape_to_string(shape));
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::BFloat16, shape);
    Value* t = f.add(OpKind::Transpose, {f.add(OpKind::Neg, {x})}, PermuteAttrs{{0, 2, 1, 3}});
    f.add_output(f.add(OpKind::Reshape, {t}, ReshapeAttrs{{shape[0], shape[2], shape[1] * shape[3]}}));
    Layout l = Layout::contiguous(shape);
    if (!strides.empty()) l.strides = strides;
    HostTensor in = tensor_with_layout(DType::BFloat16, l);
    test::fill(in, [](int64_t k) { return static_cast<double>((k * 7) % 23) - 11.0; });
    const GeneratedKernel k = generate_kernel(KernelSpec{&f, {l}, {Layout::contiguous(f.outputs()[0]->shape)}}, Target::Cuda);
    EXPECT_NE(k.source.find("n0_rl = n0_s1 % 8 == 0 ? 3 : 0"), std::string::npos);
    EXPECT_EQ(k.abi.index32, strides.empty());
    expect_gpu_matches_cpu(f, {in});
  }
  Fusion g;
  Value* x = g.add_tensor_input("x", DType::Float32, {16, 3, 24});
  g.add_output(g.add(OpKind::Exp, {g.add(OpKind::Transpose, {x}, PermuteAttrs{{1, 0, 2}})}));
  const KernelSpec spec{&g, {Layout::contiguous({16, 3, 24})}, {Layout::contiguous({3, 16, 24})}};
  EXPECT_NE(generate_kernel(spec, Target::Cuda).source.find("n0_rl = n0_s0 % 8 == 0 ? 3 : 0"), std::string::npos);
  expect_gpu_matches_cpu(g, {random_tensor(DType::Float32, {16, 3, 24}, 52)});
}

// Transpose-like nests take the shared-memory tiled schedule.
TEST(CodegenGpu, TiledTranspose_MatchesCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
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

// The packed variant of the tiled schedule: f32 with edge tiles (1000 x 700 in tiles of 64), the
// same at an odd offset (the element variant at run time); bf16 with a load broadcast over the
// outer dims (packed along the innermost dim) and one broadcast along it (read by element); and
// 64-bit index math (a size-1 dim's stride of 2^31).
TEST(CodegenGpu, PackedTiles_MatchCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  for (const int64_t offset : {0, 1}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    Fusion f;
    Value* a = f.add_tensor_input("a", DType::Float32, {1000, 700});
    Value* b = f.add_tensor_input("b", DType::Float32, {700, 1000});
    f.add_output(f.add(OpKind::Add, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}), b}));
    HostTensor in = tensor_with_layout(DType::Float32, Layout::contiguous({1000, 700}, offset));
    test::fill(in, [](int64_t k) { return static_cast<double>((k * 13) % 101) - 50.0; });
    const KernelSpec spec{&f, {in.layout(), Layout::contiguous({700, 1000})}, {Layout::contiguous({700, 1000})}};
    EXPECT_NE(generate_kernel(spec, Target::Cuda).source.find("if (n0_packed)"), std::string::npos);
    expect_gpu_matches_cpu(f, {in, random_tensor(DType::Float32, {700, 1000}, 53)});
  }
  {
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::BFloat16, {2, 136, 3, 24});
    Value* y = f.add_tensor_input("y", DType::BFloat16, {24, 136});
    Value* z = f.add_tensor_input("z", DType::BFloat16, {2, 24, 3});
    Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 3, 2, 1}});
    Value* yb = f.add(OpKind::BroadcastInDim, {y}, BroadcastAttrs{{2, 24, 3, 136}, {1, 3}});
    Value* zb = f.add(OpKind::BroadcastInDim, {z}, BroadcastAttrs{{2, 24, 3, 136}, {0, 1, 2}});
    f.add_output(f.add(OpKind::Add, {f.add(OpKind::Add, {t, yb}), zb}));
    const KernelSpec spec{&f,
                          {Layout::contiguous({2, 136, 3, 24}), Layout::contiguous({24, 136}), Layout::contiguous({2, 24, 3})},
                          {Layout::contiguous({2, 24, 3, 136})}};
    EXPECT_NE(generate_kernel(spec, Target::Cuda).source.find("if (n0_packed)"), std::string::npos);
    expect_gpu_matches_cpu(f, {random_tensor(DType::BFloat16, {2, 136, 3, 24}, 54),
                               random_tensor(DType::BFloat16, {24, 136}, 55),
                               random_tensor(DType::BFloat16, {2, 24, 3}, 56)});
  }
  {
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float32, {1, 96, 64});
    f.add_output(f.add(OpKind::Exp, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1}})}));
    Layout l = Layout::contiguous({1, 96, 64});
    l.strides[0] = int64_t{1} << 31;
    HostTensor in = tensor_with_layout(DType::Float32, l);
    test::fill(in, [](int64_t k) { return static_cast<double>(k % 29) * 0.125; });
    const GeneratedKernel k = generate_kernel(KernelSpec{&f, {l}, {Layout::contiguous({1, 64, 96})}}, Target::Cuda);
    EXPECT_FALSE(k.abi.index32);
    EXPECT_NE(k.source.find("if (n0_packed)"), std::string::npos);
    expect_gpu_matches_cpu(f, {in});
  }
}

// 1 + tanh(u) takes the special-function unit's exp2 and reciprocal on CUDA (vf_one_plus_tanh):
// the tanh gelu and 1 - tanh(u) over the whole range, infinities and NaN, vectorized and not.
TEST(CodegenGpu, OnePlusTanhOverTheRange_MatchesCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const int64_t n = 4099;  // not a multiple of the pack: the scalar loop takes the tail
  HostTensor x = HostTensor::empty(DType::Float32, {n});
  const double inf = std::numeric_limits<double>::infinity();
  test::fill(x, [&](int64_t k) {
    if (k < 3) return k == 0 ? inf : k == 1 ? -inf : std::nan("");
    return -60.0 + 120.0 * static_cast<double>(k) / static_cast<double>(n);
  });
  Fusion f;
  Value* a = f.add_tensor_input("x", DType::Float32, {n});
  auto c = [&](double v) { return f.add_constant(Scalar::from_float(v)); };
  Value* cube = f.add(OpKind::Mul, {f.add(OpKind::Mul, {a, a}), a});
  Value* u = f.add(OpKind::Mul, {c(0.7978845608028654), f.add(OpKind::Add, {a, f.add(OpKind::Mul, {c(0.044715), cube})})});
  f.add_output(f.add(OpKind::Mul, {f.add(OpKind::Mul, {c(0.5), a}), f.add(OpKind::Add, {c(1.0), f.add(OpKind::Tanh, {u})})}));
  f.add_output(f.add(OpKind::Sub, {c(1.0), f.add(OpKind::Tanh, {a})}));
  expect_gpu_matches_cpu(f, {x});
}

TEST(CodegenGpu, ElementwiseOpsAndCasts_MatchCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  for (DType dtype : test::kAllDTypes) {
    Fusion f;
    Value* a = f.add_tensor_input("a", dtype, {257});
    Value* b = f.add_tensor_input("b", dtype, {257});
    if (is_floating(dtype)) {
      for (OpKind op : test::kUnaryFloatOps) f.add_output(f.add(op, {a}));
      for (OpKind op : {OpKind::Pow, OpKind::Atan2, OpKind::Div, OpKind::Maximum, OpKind::Remainder, OpKind::Fmod,
                        OpKind::Zeta})
        f.add_output(f.add(op, {a, b}));
      if (!is_half(dtype)) f.add_output(f.add(OpKind::Nextafter, {a, b}));
    } else if (!is_bool(dtype)) {
      for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Remainder, OpKind::Fmod,
                        OpKind::BitwiseXor, OpKind::Minimum, OpKind::BitwiseLeftShift, OpKind::BitwiseRightShift})
        f.add_output(f.add(op, {a, b}));
    }
    for (DType to : test::kAllDTypes) f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{to}));
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_gpu_matches_cpu(f, {random_tensor(dtype, {257}, 47), random_tensor(dtype, {257}, 48)});
  }
}

// zeta at its domain's cases (double arithmetic and pow on the device) as on the CPU.
TEST(CodegenGpu, ZetaInItsDomain_MatchesCpu) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_short_name(dtype));
    expect_gpu_matches_cpu(test::zeta_fusion(dtype), test::zeta_domain_inputs(dtype));
  }
}

// Kernel time of a few reference cases (run with --gtest_also_run_disabled_tests); prints only.
// Host wall time of back-to-back launches on the default stream, after warm-up launches.
double time_kernel_us(const Fusion& f, const std::vector<Layout>& in_layouts) {
  KernelSpec spec{&f, in_layouts, {}};
  for (const Value* v : f.outputs()) spec.output_layouts.push_back(Layout::contiguous(v->shape));
  std::vector<DeviceBuffer> bufs;
  std::vector<KernelBuffer> ins, outs;
  for (size_t i = 0; i < in_layouts.size(); ++i)
    bufs.emplace_back(in_layouts[i].storage_extent() * dtype_size(f.inputs()[i]->dtype));
  for (size_t o = 0; o < spec.output_layouts.size(); ++o)
    bufs.emplace_back(spec.output_layouts[o].numel() * dtype_size(f.outputs()[o]->dtype));
  for (size_t i = 0; i < in_layouts.size(); ++i) ins.push_back({bufs[i].data(), &spec.input_layouts[i]});
  for (size_t o = 0; o < spec.output_layouts.size(); ++o)
    outs.push_back({bufs[in_layouts.size() + o].data(), &spec.output_layouts[o]});
  std::shared_ptr<const PreparedKernel> kernel = gpu_backend().prepare(spec);
  std::vector<Scalar> scalars(ins.size());
  const KernelArgs args{ins, scalars, outs, nullptr};
  for (int i = 0; i < 3; ++i) kernel->launch(args);
  cuda_synchronize();
  const int reps = 20;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) kernel->launch(args);
  cuda_synchronize();
  const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / reps;
}

TEST(CodegenGpu, DISABLED_Timings) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
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
