// The CUDA schedule of reduction rows (schedule_cuda.cpp choose_team and choose_row_registers,
// emit_cuda_reduction.cpp): team size, 16-byte packs, what stays in registers, and the analysis of
// loads that a reshape splits (kernel_ir.h group_var_uses). Values are checked against the
// reference in codegen_reduction_test.cpp, on both backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codegen/generate_kernel.h"
#include "codegen/kernel_ir.h"
#include "codegen/lower_kernel.h"
#include "codegen/schedule_cuda.h"
#include "codegen_test_util.h"
#include "test_support.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::contiguous_spec;

using test::constant;

// Layer norm over the last dim of a bf16 [rows, n] input with bf16 weight and bias.
void layer_norm(Fusion& f, int64_t rows, int64_t n) {
  const Shape s{rows, n};
  Value* x = f.add(OpKind::ConvertElementType, {f.add_tensor_input("x", DType::BFloat16, s)}, CastAttrs{DType::Float32});
  Value* w = f.add_tensor_input("w", DType::BFloat16, {n});
  auto vm = f.add_node(OpKind::VarMean, {x}, VarAttrs{{1}, 0});
  auto row = [&](Value* v) { return f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{s, {0}}); };
  Value* r = f.add(OpKind::Rsqrt, {f.add(OpKind::Add, {vm[0], constant(f, 1e-5)})});
  Value* y = f.add(OpKind::Mul, {f.add(OpKind::Sub, {x, row(vm[1])}), row(r)});
  Value* wf = f.add(OpKind::BroadcastInDim, {f.add(OpKind::ConvertElementType, {w}, CastAttrs{DType::Float32})},
                    BroadcastAttrs{s, {1}});
  f.add_output(f.add(OpKind::ConvertElementType, {f.add(OpKind::Mul, {y, wf})}, CastAttrs{DType::BFloat16}));
}

KernelSchedule cuda_schedule(const Fusion& f) {
  const KernelSpec spec = contiguous_spec(f);
  return schedule_cuda(spec, lower_kernel(spec).ir);
}

TEST(ReductionSchedule, LayerNormRow_TeamOf128WithFourPacksPerThread) {
  Fusion f;
  layer_norm(f, 64, 4096);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  ASSERT_EQ(k.abi.nests.size(), 1u);
  EXPECT_EQ(k.abi.nests[0].team, 128);
  const ReductionSchedule r = cuda_schedule(f).nests.at(0).reduction;
  EXPECT_EQ(r.vec, 8);
  EXPECT_EQ(r.per_thread, 32);
  EXPECT_EQ(k.abi.block_size, 128);
  EXPECT_THAT(k.source, HasSubstr("__launch_bounds__(128, 8)"));
  EXPECT_THAT(k.source, HasSubstr("vf_pack<vf_u16, 8> pk"));  // x kept as packs across the phases
  EXPECT_THAT(k.source, HasSubstr("if (row_aligned)"));        // else: the strided loop
  EXPECT_THAT(k.source, HasSubstr("red0[2][32]"));             // combine buffers by row parity
}

// Rows of 768 bf16 (nanoGPT's) in a team of 32, packs of 8: three groups a thread hold them, and
// three it takes ("exact-groups"). Switched off (VF_DISABLE_SCHEDULES), the groups are rounded up
// to a power of two, four, and the row's loads take a third more registers (nanoGPT's residual +
// layer norm, four loads: 64 instead of 48, a kernel made for 96 registers, not 64).
TEST(ReductionSchedule, RowOf768_ThreeGroupsAThreadNotFour) {
  Fusion f;
  layer_norm(f, 64, 768);
  const KernelSchedule s = cuda_schedule(f);
  EXPECT_EQ(s.abi.nests.at(0).team, 32);
  EXPECT_EQ(s.nests.at(0).reduction.vec, 8);
  EXPECT_EQ(s.nests.at(0).reduction.per_thread, 24);
  const test::ScopedEnv off("VF_DISABLE_SCHEDULES", "exact-groups");
  const ReductionSchedule rounded = cuda_schedule(f).nests.at(0).reduction;
  EXPECT_EQ(rounded.per_thread, 32);
  EXPECT_EQ(s.nests.at(0).reduction.load_registers * 4, rounded.load_registers * 3);
}

TEST(ReductionSchedule, LayerNormRowWhereDeepDisabled_TeamOf512WithOnePackPerThread) {
  const test::ScopedEnv off("VF_DISABLE_SCHEDULES", "deep");
  Fusion f;
  layer_norm(f, 64, 4096);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_EQ(k.abi.nests[0].team, 512);
  EXPECT_EQ(cuda_schedule(f).nests.at(0).reduction.per_thread, 8);
  EXPECT_EQ(k.abi.block_size, 512);
}

TEST(ReductionSchedule, RowNotAMultipleOfThePack_NoPacks) {
  Fusion f;
  layer_norm(f, 4, 4099);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_EQ(cuda_schedule(f).nests.at(0).reduction.vec, 1);
  EXPECT_THAT(k.source, Not(HasSubstr("row_aligned")));
}

TEST(ReductionSchedule, RowTooLongForRegisters_StridedBlockOf512) {
  Fusion f;
  layer_norm(f, 2, 1 << 20);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_EQ(k.abi.nests[0].team, 512);
  EXPECT_EQ(cuda_schedule(f).nests.at(0).reduction.per_thread, 0);
}

// Two sums of f32 [rows, cols] over the rows (a column reduction's partials and its second input).
Fusion outer_sums(int64_t rows, int64_t cols) {
  Fusion f;
  for (const char* name : {"p", "q"})
    f.add_output(f.add(OpKind::Sum, {f.add_tensor_input(name, DType::Float32, {rows, cols})}, DimsAttrs{{0}}));
  return f;
}

TEST(ReductionSchedule, OuterSumOfFewColumns_SlicedTilesOf32) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  const Fusion f = outer_sums(512, 768);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  const ReductionSchedule r = cuda_schedule(f).nests.at(0).reduction;
  EXPECT_EQ(r.slices, 32);  // 512 rows: 16 elements a thread
  EXPECT_EQ(k.abi.block_size, 1024);
  EXPECT_EQ(k.abi.nests[0].grain, 32);
  EXPECT_THAT(k.source, HasSubstr("const vf_i64 row_at = tile * 32 + threadIdx.x % 32;"));
  EXPECT_THAT(k.source, HasSubstr("red0[2][32][32]"));
  EXPECT_THAT(k.source, HasSubstr("if (lane == 0 && row_in)"));
}

TEST(ReductionSchedule, OuterSumOfFewColumns_TeamPerRowWhereSlicedDisabled) {
  const test::ScopedEnv off("VF_DISABLE_SCHEDULES", "preload,sliced");
  EXPECT_EQ(cuda_schedule(outer_sums(512, 768)).nests.at(0).reduction.slices, 0);
}

TEST(ReductionSchedule, OuterSumOfFewShortColumns_FewerSlices) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  EXPECT_EQ(cuda_schedule(outer_sums(64, 768)).nests.at(0).reduction.slices, 4);  // 16 elements a thread
  EXPECT_EQ(cuda_schedule(outer_sums(8, 768)).nests.at(0).reduction.slices, 1);
}

TEST(ReductionSchedule, OuterSumOfManyColumns_AThreadPerColumn) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  const Fusion f = outer_sums(8, 64 * 1024);
  EXPECT_EQ(cuda_schedule(f).nests.at(0).reduction.slices, 0);
  EXPECT_EQ(generate_kernel(contiguous_spec(f), Target::Cuda).abi.nests[0].team, 1);
}

TEST(ReductionSchedule, OuterSumWithFullShapeOutput_NotSliced) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  Fusion f;
  Value* x = f.add(OpKind::Exp, {f.add_tensor_input("x", DType::Float32, {512, 768})});
  f.add_output(x);
  f.add_output(f.add(OpKind::Sum, {x}, DimsAttrs{{0}}));
  EXPECT_EQ(cuda_schedule(f).nests.at(0).reduction.slices, 0);
}

// y = x + h, rms-normalized by its row, times w: the residual h and weight w are read by the
// stores' loop only.
Fusion residual_norm(int64_t rows, int64_t n) {
  Fusion f;
  const Shape s{rows, n};
  auto f32 = [&](Value* v) { return f.add(OpKind::ConvertElementType, {v}, CastAttrs{DType::Float32}); };
  Value* x = f32(f.add_tensor_input("x", DType::BFloat16, s));
  Value* h = f32(f.add_tensor_input("h", DType::BFloat16, s));
  Value* w = f.add(OpKind::BroadcastInDim, {f32(f.add_tensor_input("w", DType::BFloat16, {n}))}, BroadcastAttrs{s, {1}});
  Value* ms = f.add(OpKind::Sum, {f.add(OpKind::Mul, {x, x})}, DimsAttrs{{1}});
  Value* r = f.add(OpKind::BroadcastInDim, {f.add(OpKind::Rsqrt, {ms})}, BroadcastAttrs{s, {0}});
  Value* y = f.add(OpKind::Mul, {f.add(OpKind::Mul, {f.add(OpKind::Add, {x, h}), r}), w});
  f.add_output(f.add(OpKind::ConvertElementType, {y}, CastAttrs{DType::BFloat16}));
  return f;
}

TEST(ReductionSchedule, LaterLoopsPacks_PreloadedByTheFirstLoop) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  const Fusion f = residual_norm(64, 256);  // 3 packs of a group each: 12 of 64 registers
  const ReductionSchedule r = cuda_schedule(f).nests.at(0).reduction;
  int preloaded = 0;
  for (char p : r.preloaded) preloaded += p;
  EXPECT_EQ(preloaded, 2);  // h and w
  EXPECT_TRUE(r.preload_row_values);
}

TEST(ReductionSchedule, RowLoadsOverHalfTheRegisters_NotPreloaded) {
  const test::ScopedEnv on("VF_DISABLE_SCHEDULES", "");
  const Fusion f = residual_norm(64, 4096);  // 3 loads x 4 groups: 48 of 64 registers
  const ReductionSchedule r = cuda_schedule(f).nests.at(0).reduction;
  EXPECT_GT(2 * r.load_registers, r.registers);
  for (char p : r.preloaded) EXPECT_EQ(p, 0);
}

// x + merge_heads(y) reduced over the merged dim: y's address is (k / hs) * stride + k % hs.
std::string merge_heads_sum_source(int64_t H, int64_t hs) {
  Fusion f;
  const int64_t B = 2, T = 3, C = H * hs;
  Value* y = f.add_tensor_input("y", DType::BFloat16, {B, H, T, hs});
  Value* x = f.add_tensor_input("x", DType::BFloat16, {B, T, C});
  Value* merged = f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {y}, PermuteAttrs{{0, 2, 1, 3}})},
                        ReshapeAttrs{{B, T, C}});
  Value* h = f.add(OpKind::ConvertElementType, {f.add(OpKind::Add, {x, merged})}, CastAttrs{DType::Float32});
  f.add_output(f.add(OpKind::Sum, {h}, DimsAttrs{{2}}));
  return generate_kernel(contiguous_spec(f), Target::Cuda).source;
}

TEST(ReductionSchedule, RowSplitByReshape_BothLoadsInPacksWithAlignmentAtTheSplit) {
  const std::string source = merge_heads_sum_source(4, 16);
  EXPECT_THAT(source, HasSubstr("pk0 = *(const vf_pack<vf_u16, 8>*)"));
  EXPECT_THAT(source, HasSubstr("pk1 = *(const vf_pack<vf_u16, 8>*)"));
  EXPECT_THAT(source, HasSubstr("vf_index krest = a.f"));  // the alignment of element hs is checked
}

TEST(ReductionSchedule, RowAndHeadDimMultiplesOfFourOnly_PacksOfFour) {
  const std::string source = merge_heads_sum_source(3, 12);  // rows of 36: packs of 4 bf16
  EXPECT_THAT(source, HasSubstr("vf_pack<vf_u16, 4>"));
  EXPECT_THAT(source, Not(HasSubstr("vf_pack<vf_u16, 8>")));
}

TEST(ReductionSchedule, Softmax_ExpComputedOnceInTheRegisterPath) {
  Fusion f;
  const Shape s{8, 2048};
  Value* x = f.add_tensor_input("x", DType::Float32, s);
  auto row = [&](Value* v) { return f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{s, {0}}); };
  Value* e = f.add(OpKind::Exp, {f.add(OpKind::Sub, {x, row(f.add(OpKind::Amax, {x}, DimsAttrs{{1}}))})});
  f.add_output(f.add(OpKind::Div, {e, row(f.add(OpKind::Sum, {e}, DimsAttrs{{1}}))}));
  const std::string source = generate_kernel(contiguous_spec(f), Target::Cuda).source;
  const size_t fallback = source.find("} else {");
  ASSERT_NE(fallback, std::string::npos) << source;
  const size_t begin = source.find("if (row_aligned)");
  ASSERT_LT(begin, fallback);
  const std::string packed = source.substr(begin, fallback - begin);
  size_t exps = 0;
  for (size_t at = packed.find("vf_exp("); at != std::string::npos; at = packed.find("vf_exp(", at + 1)) ++exps;
  EXPECT_EQ(exps, 1u) << packed;
  EXPECT_THAT(packed, HasSubstr("cache"));  // the exp's values, read by the store loop
}

// A nest over one var k (a reduced var, dim 0) and index expressions built by hand.
struct SplitNest {
  LoopNest nest;
  std::vector<AbiField> fields;
  int k = 0;
  int constant_field(int64_t value) {
    AbiField field;
    field.kind = AbiFieldKind::Constant;
    field.value = value;
    fields.push_back(field);
    return nest.param(static_cast<int>(fields.size()) - 1);
  }
  SplitNest() { k = nest.var(0); }
};

TEST(GroupVarUses, DivAndModOfTheVarByAMultiple_GroupedAndUnit) {
  SplitNest s;
  const int c = s.constant_field(128), stride = s.constant_field(262144);
  const int q = s.nest.binary(IndexOp::Div, s.k, c), r = s.nest.binary(IndexOp::Mod, s.k, c);
  const int address = s.nest.binary(IndexOp::Add, s.nest.binary(IndexOp::Mul, q, stride), r);
  const std::vector<VarUse> use = group_var_uses(s.nest, 0, 8, s.fields);
  EXPECT_EQ(use[q], VarUse::Grouped);
  EXPECT_EQ(use[r], VarUse::Unit);
  EXPECT_EQ(use[address], VarUse::Unit);
  EXPECT_EQ(var_uses(s.nest, 0)[address], VarUse::Other);  // without groups: not unit stride
  EXPECT_EQ(var_divisors(s.nest, address, 0).size(), 1u);    // one field, c, divides and splits k
}

TEST(GroupVarUses, DivisorNotAMultipleOfTheGroup_Other) {
  SplitNest s;
  const int c = s.constant_field(12);
  const int address = s.nest.binary(IndexOp::Add, s.nest.binary(IndexOp::Div, s.k, c),
                                    s.nest.binary(IndexOp::Mod, s.k, c));
  EXPECT_EQ(group_var_uses(s.nest, 0, 8, s.fields)[address], VarUse::Other);
  EXPECT_EQ(group_var_uses(s.nest, 0, 4, s.fields)[address], VarUse::Unit);
}

// A cat's range test k - lo < hi: one answer per aligned group when the bounds are multiples.
TEST(GroupVarUses, BoundTestAtMultiples_Grouped) {
  SplitNest s;
  const int c64 = s.constant_field(64), c12 = s.constant_field(12), c16 = s.constant_field(16);
  const int shifted = s.nest.binary(IndexOp::Sub, s.k, c16);
  const int below = s.nest.binary(IndexOp::Lt, shifted, c64);
  const int above = s.nest.binary(IndexOp::Ge, s.k, c12);
  const int both = s.nest.binary(IndexOp::And, below, s.nest.binary(IndexOp::Ge, s.k, c16));
  const int off = s.nest.binary(IndexOp::Lt, s.nest.binary(IndexOp::Add, s.k, s.nest.constant(3)), c64);
  const std::vector<VarUse> use = group_var_uses(s.nest, 0, 8, s.fields);
  EXPECT_EQ(use[shifted], VarUse::Unit);
  EXPECT_EQ(use[below], VarUse::Grouped);
  EXPECT_EQ(use[both], VarUse::Grouped);
  EXPECT_EQ(use[above], VarUse::Other);  // 12 splits the group [8, 16)
  EXPECT_EQ(use[off], VarUse::Other);    // k + 3 < 64 changes inside the group [56, 64)
  EXPECT_EQ(group_var_uses(s.nest, 0, 4, s.fields)[above], VarUse::Grouped);
  // 64 < k and 64 >= k change between k = 64 and k = 65, inside the group [64, 72).
  const int after = s.nest.binary(IndexOp::Lt, c64, s.k), upto = s.nest.binary(IndexOp::Ge, c64, s.k);
  const std::vector<VarUse> swapped = group_var_uses(s.nest, 0, 8, s.fields);
  EXPECT_EQ(swapped[after], VarUse::Other);
  EXPECT_EQ(swapped[upto], VarUse::Other);
}

TEST(GroupVarUses, TwoUnitTerms_Other) {
  SplitNest s;
  const int twice = s.nest.binary(IndexOp::Add, s.k, s.k);
  EXPECT_EQ(group_var_uses(s.nest, 0, 8, s.fields)[twice], VarUse::Other);
}

}  // namespace
}  // namespace vf
