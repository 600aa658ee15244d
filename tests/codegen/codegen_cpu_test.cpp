// End-to-end tests of generated CPU kernels: view and movement ops on chosen layouts, checked
// against the reference executor (and hand-computed values for a few).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <filesystem>

#include "base/error.h"
#include "codegen/pack_launch.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"

namespace vf {
namespace {

using test::expect_matches_reference;
using test::fill;
using test::permuted_layout;
using test::run_cpu;
using test::tensor_with_layout;
using test::values;
using ::testing::HasSubstr;

using test::backend;

// A tensor with `layout` holding seeded random values.
HostTensor random_with_layout(DType dtype, const Layout& layout, uint64_t seed) {
  HostTensor t = tensor_with_layout(dtype, layout);
  HostTensor r = random_tensor(dtype, layout.sizes, seed);
  int64_t k = 0;
  std::vector<double> v = values(r);
  fill(t, [&](int64_t) { return v[k++]; });
  return t;
}

HostTensor random_contiguous(DType dtype, const Shape& shape, uint64_t seed) {
  return random_with_layout(dtype, Layout::contiguous(shape), seed);
}

TEST(CodegenCpu, AddContiguous_MatchesHand) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {2, 3});
  Value* b = f.add_tensor_input("b", DType::Float32, {2, 3});
  f.add_output(f.add(OpKind::Add, {a, b}));
  HostTensor ta = HostTensor::empty(DType::Float32, {2, 3}), tb = HostTensor::empty(DType::Float32, {2, 3});
  fill(ta, [](int64_t k) { return k; });
  fill(tb, [](int64_t k) { return 10 * k; });
  auto out = run_cpu(backend(), f, {ta, tb});
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 11, 22, 33, 44, 55}));
}

// The seed: transpose (0, 2, 1, 3) then reshape [2, 8, 256] needs div/mod on a contiguous input.
TEST(CodegenCpu, SeedPermuteReshape_MatchesReference) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 16, 8, 16});
  Value* w = f.add_tensor_input("w", DType::BFloat16, {256});
  Value* t1 = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}});
  Value* t3 = f.add(OpKind::Reshape, {t1}, ReshapeAttrs{{2, 8, 256}});
  Value* t4 = f.add(OpKind::ConvertElementType, {w}, CastAttrs{DType::Float32});
  Value* t5 = f.add(OpKind::BroadcastInDim, {t4}, BroadcastAttrs{{2, 8, 256}, {2}});
  f.add_output(f.add(OpKind::Mul, {t3, t5}));
  f.add_output(t3);
  std::vector<HostTensor> in{random_contiguous(DType::Float32, {2, 16, 8, 16}, 1),
                             random_contiguous(DType::BFloat16, {256}, 2)};
  expect_matches_reference(backend(), f, in);
  KernelSpec spec{&f, {in[0].layout(), in[1].layout()},
                  {Layout::contiguous({2, 8, 256}), Layout::contiguous({2, 8, 256})}};
  EXPECT_THAT(generate_kernel(spec, Target::Cpu).source, HasSubstr(" % "));
}

// When the input is stored as [2, 8, 16, 16] in memory, the same chain is a pure view and the
// kernel loads through the composed layout without div/mod.
TEST(CodegenCpu, PermuteReshapePureView_LoadsThroughComposedLayout) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 16, 8, 16});
  Value* t1 = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}});
  Value* t3 = f.add(OpKind::Reshape, {t1}, ReshapeAttrs{{2, 8, 256}});
  f.add_output(f.add(OpKind::Neg, {t3}));
  const Layout l = permuted_layout({2, 16, 8, 16}, {0, 2, 1, 3});
  std::vector<HostTensor> in{random_with_layout(DType::Float32, l, 3)};
  expect_matches_reference(backend(), f, in);
  KernelSpec spec{&f, {l}, {Layout::contiguous({2, 8, 256})}};
  GeneratedKernel k = generate_kernel(spec, Target::Cpu);
  const std::string body = k.source.substr(k.source.find("extern \"C\" void " + k.entry));
  EXPECT_EQ(body.find(" / a."), std::string::npos) << body;
  EXPECT_EQ(k.abi.views.size(), 1u);
}

// Views of one input whose chains differ only in unit-step slices (RoPE's q, k and their halves,
// sliced from qkv) read one set of stride arguments; each keeps its own offset. On a qkv whose rows
// are padded (row stride 56, not 48) the halves still match the reference.
TEST(CodegenCpu, SlicesOfOneView_ShareStrideArguments) {
  Fusion f;
  Value* qkv = f.add_tensor_input("qkv", DType::Float32, {2, 4, 48});
  Value* heads = f.add(OpKind::Reshape, {qkv}, ReshapeAttrs{{2, 4, 3, 2, 8}});
  for (int64_t part : {0, 1}) {
    Value* s = f.add(OpKind::SlicePrim, {heads}, SliceAttrs{{0, 0, part, 0, 0}, {2, 4, part + 1, 2, 8}, {1, 1, 1, 1, 1}});
    Value* x = f.add(OpKind::Transpose, {f.add(OpKind::Squeeze, {s}, DimsAttrs{{2}})}, PermuteAttrs{{0, 2, 1, 3}});
    Value* lo = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0, 0}, {2, 2, 4, 4}, {1, 1, 1, 1}});
    Value* hi = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0, 4}, {2, 2, 4, 8}, {1, 1, 1, 1}});
    f.add_output(f.add(OpKind::Cat, {f.add(OpKind::Neg, {hi}), lo}, AxisAttrs{3}));
  }
  Layout padded = Layout::contiguous({2, 4, 48});
  padded.strides = {4 * 56, 56, 1};
  KernelSpec spec{&f, {padded}, {Layout::contiguous({2, 2, 4, 8}), Layout::contiguous({2, 2, 4, 8})}};
  const GeneratedKernel k = generate_kernel(spec, Target::Cpu);
  EXPECT_EQ(k.abi.views.size(), 4u);  // the halves of q and of k
  int strides = 0, offsets = 0;
  for (const AbiField& field : k.abi.fields) {
    strides += field.kind == AbiFieldKind::ViewStride;
    offsets += field.kind == AbiFieldKind::ViewOffset;
  }
  EXPECT_LE(strides, 4);  // one view's, at most one per dim
  EXPECT_EQ(offsets, 4);
  expect_matches_reference(backend(), f, {random_with_layout(DType::Float32, padded, 11)});
}

TEST(CodegenCpu, NonContiguousInputs_MatchReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4, 5, 3});
  Value* b = f.add_tensor_input("b", DType::Float32, {4, 5, 3});
  Value* c = f.add_tensor_input("c", DType::Float32, {4, 5, 3});
  Value* d = f.add_tensor_input("d", DType::Float32, {1, 5, 1});
  Value* db = f.add(OpKind::BroadcastInDim, {d}, BroadcastAttrs{{4, 5, 3}, {0, 1, 2}});
  f.add_output(f.add(OpKind::Add, {f.add(OpKind::Mul, {a, b}), f.add(OpKind::Sub, {c, db})}));
  std::vector<HostTensor> in{
      random_with_layout(DType::Float32, permuted_layout({4, 5, 3}, {2, 0, 1}), 4),  // permuted
      random_with_layout(DType::Float32, Layout{{4, 5, 3}, {40, 6, 2}, 7}, 5),       // sliced, offset
      random_with_layout(DType::Float32, Layout{{4, 5, 3}, {0, 1, 0}, 2}, 6),        // expanded
      random_with_layout(DType::Float32, Layout{{1, 5, 1}, {99, 1, 42}, 0}, 7)};     // size-1 dims
  expect_matches_reference(backend(), f, in);
  // A permuted, offset output layout.
  expect_matches_reference(backend(), f, in, {permuted_layout({4, 5, 3}, {1, 2, 0}, 3)});
}

TEST(CodegenCpu, EmptyTensor_RunsNothing) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {3, 0, 2});
  f.add_output(f.add(OpKind::Exp, {a}));
  std::vector<HostTensor> in{random_contiguous(DType::Float32, {3, 0, 2}, 8)};
  auto out = run_cpu(backend(), f, in);
  EXPECT_EQ(out[0].numel(), 0);
}

TEST(CodegenCpu, SliceSqueezeBroadcast_MatchReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {6, 1, 9});
  Value* s = f.add(OpKind::SlicePrim, {a}, SliceAttrs{{1, 0, 2}, {6, 1, 9}, {2, 1, 3}});  // [3, 1, 3]
  Value* q = f.add(OpKind::Squeeze, {s}, DimsAttrs{{1}});                                // [3, 3]
  Value* b = f.add(OpKind::BroadcastInDim, {q}, BroadcastAttrs{{2, 3, 4, 3}, {1, 3}});   // [2, 3, 4, 3]
  f.add_output(f.add(OpKind::Mul, {b, b}));
  f.add_output(s);
  expect_matches_reference(backend(), f, {random_contiguous(DType::Float32, {6, 1, 9}, 9)});
  // A non-contiguous input: the slice stays a view of it.
  expect_matches_reference(backend(), f,
                           {random_with_layout(DType::Float32, permuted_layout({6, 1, 9}, {2, 1, 0}, 5), 10)});
}

TEST(CodegenCpu, ReshapeSplitAndMerge_MatchReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int32, {6, 4, 5});
  Value* r = f.add(OpKind::Reshape, {a}, ReshapeAttrs{{3, 8, 1, 5}});
  Value* t = f.add(OpKind::Transpose, {r}, PermuteAttrs{{3, 1, 2, 0}});  // [5, 8, 1, 3]
  f.add_output(f.add(OpKind::Reshape, {t}, ReshapeAttrs{{10, 12}}));
  expect_matches_reference(backend(), f, {random_contiguous(DType::Int32, {6, 4, 5}, 11)});
  expect_matches_reference(backend(), f,
                           {random_with_layout(DType::Int32, permuted_layout({6, 4, 5}, {1, 2, 0}), 12)});
}

TEST(CodegenCpu, PadNegativeAndInterior_MatchesReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4, 5});
  Value* pad_value = f.add_constant(Scalar::from_float(-7.5));
  Value* p = f.add(OpKind::Pad, {a, pad_value}, PadAttrs{{{-1, 2, 1}, {2, -3, 0}}});
  f.add_output(f.add(OpKind::Add, {p, p}));
  f.add_output(p);
  expect_matches_reference(backend(), f, {random_contiguous(DType::Float32, {4, 5}, 13)});
}

TEST(CodegenCpu, PadHandValues_MatchHand) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int64, {3});
  Value* p = f.add(OpKind::Pad, {a, f.add_constant(Scalar::from_int(9))}, PadAttrs{{{1, -1, 1}}});
  f.add_output(p);  // [9, a0, 9, a1, 9]: size 3 + 2 + 1 - 1 = 5
  HostTensor t = HostTensor::empty(DType::Int64, {3});
  fill(t, [](int64_t k) { return k + 1; });
  EXPECT_EQ(values(run_cpu(backend(), f, {t})[0]), (std::vector<double>{9, 1, 9, 2, 9}));
}

TEST(CodegenCpu, CatWithEmptySource_MatchesReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float16, {2, 3});
  Value* e = f.add_tensor_input("e", DType::Float16, {2, 0});
  Value* b = f.add_tensor_input("b", DType::Float16, {2, 4});
  Value* c = f.add(OpKind::Cat, {a, e, b}, AxisAttrs{1});
  f.add_output(f.add(OpKind::Mul, {c, f.add(OpKind::Flip, {c}, DimsAttrs{{0, 1}})}));
  expect_matches_reference(backend(), f,
                           {random_contiguous(DType::Float16, {2, 3}, 14), random_contiguous(DType::Float16, {2, 0}, 15),
                            random_with_layout(DType::Float16, permuted_layout({2, 4}, {1, 0}), 16)});
}

TEST(CodegenCpu, IotaAndFull_MatchHand) {
  Fusion f;
  Value* i = f.add(OpKind::Iota, {}, IotaAttrs{5, 10, -3, DType::Int64});
  Value* c = f.add(OpKind::Full, {}, FullAttrs{{5}, Scalar::from_int(2), DType::Int64});
  f.add_output(f.add(OpKind::Mul, {i, c}));
  f.add_output(f.add(OpKind::Iota, {}, IotaAttrs{5, 1, 2, DType::Float32}));
  auto out = run_cpu(backend(), f, {});
  EXPECT_EQ(values(out[0]), (std::vector<double>{20, 14, 8, 2, -4}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 3, 5, 7, 9}));
}

TEST(CodegenCpu, OutputsOfTwoShapes_TwoLoopNests) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float64, {3, 4});
  Value* t = f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}});
  f.add_output(f.add(OpKind::Sin, {a}));
  f.add_output(f.add(OpKind::Cos, {t}));
  f.add_output(f.add(OpKind::Reshape, {a}, ReshapeAttrs{{12}}));
  expect_matches_reference(backend(), f, {random_contiguous(DType::Float64, {3, 4}, 17)});
}

TEST(CodegenCpu, ScalarInputs_MatchReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::BFloat16, {7});
  Value* s = f.add_scalar_input("s", ScalarKind::Float);
  Value* k = f.add_scalar_input("k", ScalarKind::Int);
  f.add_output(f.add(OpKind::Add, {f.add(OpKind::Mul, {a, s}), k}));
  expect_matches_reference(backend(), f, {random_contiguous(DType::BFloat16, {7}, 18), HostTensor{}, HostTensor{}}, {},
                           {Scalar{}, Scalar::from_float(0.3), Scalar::from_int(3)});
}

TEST(CodegenCpu, LargeTensor_ParallelMatchesReference) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {67, 1031});
  Value* t = f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}});
  f.add_output(f.add(OpKind::Tanh, {t}));
  expect_matches_reference(backend(), f, {random_contiguous(DType::Float32, {67, 1031}, 19)});
}

TEST(CodegenCpu, NewSizeSameLayoutClass_ReusesKernel) {
  auto build = [](Fusion& f, int64_t n) {
    Value* x = f.add_tensor_input("x", DType::Float32, {2, n, 8, 16});
    Value* t1 = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}});
    f.add_output(f.add(OpKind::Exp, {f.add(OpKind::Reshape, {t1}, ReshapeAttrs{{2, 8, n * 16}})}));
  };
  CpuBackend local;
  Fusion f1, f2;
  build(f1, 16);
  build(f2, 24);
  expect_matches_reference(local, f1, {random_contiguous(DType::Float32, {2, 16, 8, 16}, 20)});
  EXPECT_EQ(local.compile_count(), 1);
  expect_matches_reference(local, f2, {random_contiguous(DType::Float32, {2, 24, 8, 16}, 21)});
  EXPECT_EQ(local.compile_count(), 1);
  // A permuted input is another layout class: a new kernel.
  expect_matches_reference(local, f2,
                           {random_with_layout(DType::Float32, permuted_layout({2, 24, 8, 16}, {0, 1, 3, 2}), 22)});
  EXPECT_EQ(local.compile_count(), 2);
}

TEST(CodegenCpu, CompilerFailure_ReportsOutputAndSource) {
  CpuBackendOptions options;
  options.compiler = "false";
  CpuBackend broken(options);
  Fusion f;
  f.add_output(f.add(OpKind::Neg, {f.add_tensor_input("a", DType::Float32, {2})}));
  KernelSpec spec{&f, {Layout::contiguous({2})}, {Layout::contiguous({2})}};
  try {
    broken.prepare(spec);
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("CPU kernel compilation failed"));
    const size_t at = what.find("/vf_failed_");
    ASSERT_NE(at, std::string::npos) << what;
    const size_t start = what.rfind(' ', at) + 1;
    const std::string kept = what.substr(start, what.find('\n', at) - start);
    EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
    std::filesystem::remove(kept);
  }
}

}  // namespace
}  // namespace vf

namespace vf {
namespace {

// Size-1 dims may have any stride (PyTorch leaves them arbitrary); the source ignores them.
TEST(CodegenCpu, SizeOneDimStrides_GiveSameSource) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {3, 1, 4});
  f.add_output(f.add(OpKind::Abs, {a}));
  KernelSpec s1{&f, {Layout{{3, 1, 4}, {4, 4, 1}, 0}}, {Layout::contiguous({3, 1, 4})}};
  KernelSpec s2{&f, {Layout{{3, 1, 4}, {4, 77, 1}, 0}}, {Layout{{3, 1, 4}, {4, 1, 1}, 0}}};
  EXPECT_EQ(generate_kernel(s1, Target::Cpu).source, generate_kernel(s2, Target::Cpu).source);
  EXPECT_EQ(generate_kernel(s1, Target::Cuda).source, generate_kernel(s2, Target::Cuda).source);
}

}  // namespace
}  // namespace vf

namespace vf {
namespace {

// Contiguous buffers in loop order make a flat nest: no index math, and launching it on a
// non-contiguous layout (another layout class) is refused.
TEST(CodegenCpu, ContiguousBuffers_FlatNestWithoutIndexMath) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4, 6});
  Value* b = f.add_tensor_input("b", DType::Float32, {4, 6});
  f.add_output(f.add(OpKind::Mul, {a, b}));
  KernelSpec spec{&f, {Layout::contiguous({4, 6}, 3), Layout::contiguous({4, 6})}, {Layout::contiguous({4, 6})}};
  GeneratedKernel k = generate_kernel(spec, Target::Cpu);
  const std::string body = k.source.substr(k.source.find("extern \"C\" void " + k.entry));
  EXPECT_EQ(body.find(" % "), std::string::npos) << body;
  EXPECT_THAT(body, HasSubstr("+ flat]"));
  EXPECT_EQ(k.abi.contiguous_inputs.size(), 2u);
  const Layout other{{4, 6}, {8, 1}, 0};  // same stride classes, not contiguous
  float buf[64] = {};
  KernelBuffer ins[2] = {{buf, &other}, {buf, &spec.input_layouts[1]}};
  KernelBuffer outs[1] = {{buf, &spec.output_layouts[0]}};
  Scalar scalars[2];
  LaunchBlock block;
  try {
    pack_launch(k, KernelArgs{ins, scalars, outs, nullptr}, 0, block);
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not contiguous"));
  }
  // A padded (row stride 8) input gives a strided nest that still matches the reference.
  std::vector<HostTensor> in{random_with_layout(DType::Float32, other, 50), random_contiguous(DType::Float32, {4, 6}, 51)};
  expect_matches_reference(backend(), f, in);
}

}  // namespace
}  // namespace vf
