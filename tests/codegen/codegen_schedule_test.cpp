// Loop spaces and CUDA schedules: a reshape that merges dims splits the loop dims (no division in
// the index math), the CUDA emitter picks the row-vector, flat-vector or tiled schedule with the
// launch shape that goes with it, and the split nests compute the reference's values on the CPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "codegen/pack_launch.h"
#include "codegen/lower_kernel.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::contiguous_spec;

using test::backend;

// (x * 0.125 + 1) permuted [B, H, S, D] -> [B, S, H, D] and merged to [B, S, H * D]: the
// merge-heads producer.
void merge_heads(Fusion& f, const Shape& x_shape, DType dtype = DType::BFloat16) {
  Value* x = f.add_tensor_input("x", dtype, x_shape);
  Value* y = f.add(OpKind::Add, {f.add(OpKind::Mul, {x, f.add_constant(Scalar::from_float(0.125))}),
                                 f.add_constant(Scalar::from_float(1.0))});
  Value* t = f.add(OpKind::Transpose, {y}, PermuteAttrs{{0, 2, 1, 3}});
  f.add_output(f.add(OpKind::Reshape, {t}, ReshapeAttrs{{x_shape[0], x_shape[2], x_shape[1] * x_shape[3]}}));
}

int count_ops(const LoopNest& nest, IndexOp op) {
  int n = 0;
  for (const IndexExpr& e : nest.indices) n += e.op == op;
  return n;
}

TEST(LoopSpace, MergedOutputDim_SplitIntoReshapeInputDims) {
  Fusion f;
  merge_heads(f, {2, 4, 6, 8});
  const KernelIR ir = lower_kernel(contiguous_spec(f)).ir;
  ASSERT_EQ(ir.nests.size(), 1u);
  const LoopNest& nest = ir.nests[0];
  EXPECT_EQ(nest.extents.size(), 4u);  // [2, 6, 4 * 8] iterated as [2, 6, 4, 8]
  EXPECT_EQ(count_ops(nest, IndexOp::Div), 0);
  EXPECT_EQ(count_ops(nest, IndexOp::Mod), 0);
  EXPECT_FALSE(nest.flat);
}

TEST(LoopSpace, ContiguousMergeOfComputedValue_StaysFlat) {
  // exp(x) merged [3, 5, 7] -> [3, 35]: the split loop dims are in order, so the nest is flat.
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {3, 5, 7});
  f.add_output(f.add(OpKind::Reshape, {f.add(OpKind::Exp, {x})}, ReshapeAttrs{{3, 35}}));
  const KernelIR ir = lower_kernel(contiguous_spec(f)).ir;
  ASSERT_EQ(ir.nests.size(), 1u);
  EXPECT_EQ(ir.nests[0].extents.size(), 3u);
  EXPECT_TRUE(ir.nests[0].flat);
}

TEST(LoopSpace, SplitNests_MatchReferenceOnCpu) {
  {
    Fusion f;
    merge_heads(f, {2, 3, 5, 4});
    test::expect_matches_reference(backend(), f, {random_tensor(DType::BFloat16, {2, 3, 5, 4}, 1)});
  }
  {
    // A merge of three dims with a size-1 dim among them, next to a split of another dim.
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float32, {2, 3, 1, 5, 6});
    Value* t = f.add(OpKind::Transpose, {f.add(OpKind::Neg, {x})}, PermuteAttrs{{4, 1, 2, 3, 0}});
    Value* r = f.add(OpKind::Reshape, {t}, ReshapeAttrs{{2, 3, 15, 2}});
    Value* y = f.add_tensor_input("y", DType::Float32, {2, 3, 15, 2});
    f.add_output(f.add(OpKind::Add, {r, y}));
    test::expect_matches_reference(backend(), f,
                                   {random_tensor(DType::Float32, {2, 3, 1, 5, 6}, 2),
                                    random_tensor(DType::Float32, {2, 3, 15, 2}, 3)});
  }
  {
    // A non-contiguous output: the split dims index it through its strides.
    Fusion f;
    merge_heads(f, {2, 2, 3, 4}, DType::Float32);
    test::expect_matches_reference(backend(), f, {random_tensor(DType::Float32, {2, 2, 3, 4}, 4)},
                                   {test::permuted_layout({2, 3, 8}, {2, 0, 1})});
  }
}

TEST(CudaSchedule, MergeHeads_RowVectorWithoutDivisionPerElement) {
  Fusion f;
  merge_heads(f, {16, 32, 2048, 128});
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_TRUE(k.abi.index32);
  EXPECT_EQ(k.abi.blocks_per_sm, 12);  // one load of two packs in flight a thread: 1,536 threads
  EXPECT_THAT(k.source, HasSubstr("__launch_bounds__(128, 12)"));
  EXPECT_THAT(k.source, HasSubstr("= vf_divider_of(a.f"));  // set up by the host
  // Alignment tested once, before the loop: the base pointers and the offset and strides.
  EXPECT_THAT(k.source, HasSubstr("n0_s3 % 8 == 0 & vf_aligned(a.f"));
  EXPECT_THAT(k.source, Not(HasSubstr("aligned[")));
  EXPECT_THAT(k.source, HasSubstr("*(const vf_pack<vf_u16, 8>*)"));  // 16-byte loads
  EXPECT_THAT(k.source, HasSubstr("*(vf_pack<vf_u16, 8>*)"));        // 16-byte stores
}

// The row-vector schedule's steps take runs of 8 rows along the dim that moves the permuted load
// to its next row (S of [B, H, S, D] read as [B, S, H, D]); not when the stores' rows follow it
// already, nor when the load's rows are not adjacent (a slice of each row).
TEST(CudaSchedule, MergeHeads_StepsInRowTilesAlongLoadRows) {
  Fusion f;
  merge_heads(f, {16, 32, 2048, 128});
  const std::string tiled = generate_kernel(contiguous_spec(f), Target::Cuda).source;
  EXPECT_THAT(tiled, HasSubstr("const int n0_rl = n0_s1 % 8 == 0 ? 3 : 0;"));
  EXPECT_THAT(tiled, HasSubstr("iv1[u] = ((n0_rest - quot * (n0_s1 >> n0_rl)) << n0_rl) + n0_lo;"));
  {
    // [A, B, S, D] permuted to [B, A, S, D]: the load's next row is along S, as the stores' is.
    Fusion g;
    Value* x = g.add_tensor_input("x", DType::BFloat16, {2, 16, 4, 64});
    g.add_output(g.add(OpKind::Transpose, {g.add(OpKind::Neg, {x})}, PermuteAttrs{{1, 0, 2, 3}}));
    const std::string source = generate_kernel(contiguous_spec(g), Target::Cuda).source;
    EXPECT_THAT(source, HasSubstr("vf_pack<vf_u16, 8>"));
    EXPECT_THAT(source, Not(HasSubstr("_rl =")));
  }
  {
    // Rows of 128 of which the kernel reads 64: the next row is not the next run.
    Fusion g;
    Value* x = g.add_tensor_input("x", DType::BFloat16, {2, 4, 16, 128});
    Value* s = g.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0, 0}, {2, 4, 16, 64}, {}});
    g.add_output(g.add(OpKind::Transpose, {g.add(OpKind::Neg, {s})}, PermuteAttrs{{0, 2, 1, 3}}));
    const std::string source = generate_kernel(contiguous_spec(g), Target::Cuda).source;
    EXPECT_THAT(source, HasSubstr("vf_pack<vf_u16, 8>"));
    EXPECT_THAT(source, Not(HasSubstr("_rl =")));
  }
}

// The launch shape pack_launch gives generated kernel k on 132 multiprocessors.
LaunchBlock launch_on_132(const GeneratedKernel& k, const KernelSpec& spec) {
  std::vector<KernelBuffer> in, out;
  for (const Layout& l : spec.input_layouts) in.push_back({nullptr, &l});
  for (const Layout& l : spec.output_layouts) out.push_back({nullptr, &l});
  std::vector<Scalar> scalars(8);
  LaunchBlock block;
  pack_launch(k, KernelArgs{in, scalars, out, nullptr}, 132, block);
  return block;
}

TEST(CudaSchedule, LaunchShape_VectorLoopOneBlockPerGrain) {
  Fusion f;
  merge_heads(f, {16, 32, 2048, 128});
  const KernelSpec spec = contiguous_spec(f);
  const GeneratedKernel k = generate_kernel(spec, Target::Cuda);
  ASSERT_EQ(k.abi.nests.size(), 1u);
  EXPECT_EQ(k.abi.nests[0].grain, 8 * 2 * 128);  // packs of 8 bf16, 2 packs a thread, 128 threads
  const LaunchBlock block = launch_on_132(k, spec);
  EXPECT_EQ(block.block, 128u);
  EXPECT_EQ(block.grid, 16u * 32 * 2048 * 128 / (8 * 2 * 128));
  // A small tensor takes one block; a size that is not a multiple of the grain rounds up.
  for (const auto& [shape, grid] : std::vector<std::pair<Shape, uint32_t>>{{{1, 2, 3, 8}, 1}, {{1, 3, 1000, 8}, 12}}) {
    Fusion g;
    merge_heads(g, shape);
    const KernelSpec small = contiguous_spec(g);
    EXPECT_EQ(launch_on_132(generate_kernel(small, Target::Cuda), small).grid, grid) << shape_to_string(shape);
  }
}

TEST(CudaSchedule, LaunchShape_ReductionOneBlockPerTeamsOfRows) {
  // Rows of 64: a warp per row, 8 rows per block of 256 threads; rows of 4096 bf16: a block per row.
  for (const auto& [shape, dtype, rows_per_block] :
       std::vector<std::tuple<Shape, DType, int64_t>>{{{1 << 20, 64}, DType::Float32, 8}, {{1000, 4096}, DType::BFloat16, 1}}) {
    Fusion f;
    Value* x = f.add_tensor_input("x", dtype, shape);
    f.add_output(f.add(OpKind::Sum, {x}, DimsAttrs{{1}}));
    const KernelSpec spec = contiguous_spec(f);
    const GeneratedKernel k = generate_kernel(spec, Target::Cuda);
    ASSERT_GT(k.abi.blocks_per_sm, 0);
    EXPECT_EQ(k.abi.nests[0].grain, rows_per_block) << shape_to_string(shape);
    EXPECT_EQ(k.abi.nests[0].grain * k.abi.nests[0].team, k.abi.block_size);
    EXPECT_EQ(launch_on_132(k, spec).grid, static_cast<uint32_t>((shape[0] + rows_per_block - 1) / rows_per_block));
  }
}

TEST(CudaSchedule, LaunchShape_PlainLoopOneWaveOfResidentBlocks) {
  // A column-major output of a row-major input's exp: stores walk the outer dim, loads the inner
  // one; no vector or tiled schedule, a grid-stride loop.
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {4096, 4096});
  f.add_output(f.add(OpKind::Exp, {x}));
  KernelSpec spec = contiguous_spec(f);
  spec.output_layouts[0].strides = {1, 4096};
  const GeneratedKernel k = generate_kernel(spec, Target::Cuda);
  ASSERT_EQ(k.abi.nests.size(), 1u);
  EXPECT_EQ(k.abi.nests[0].grain, 0);
  EXPECT_EQ(k.abi.block_size, 256);  // blocks of 128 are for kernels with a vector schedule
  const uint32_t per_sm = k.abi.blocks_per_sm > 0 ? static_cast<uint32_t>(k.abi.blocks_per_sm) : 8;
  EXPECT_EQ(launch_on_132(k, spec).grid, 132u * per_sm);
}

// The device divides n < 2^31 by d as (umulhi(n, m) + n) >> s in 32 bits, m and s from the host.
TEST(CudaSchedule, HostDividers_DivideExactly) {
  std::vector<int64_t> divisors{1, 2, 3, 5, 7, 12, 16, 100, 127, 128, 129, 1000, 2048, 4097, 65535, 65536, 65537,
                                (int64_t{1} << 30) - 1, int64_t{1} << 30, (int64_t{1} << 30) + 1, (int64_t{1} << 31) - 1};
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int k = 0; k < 200; ++k) divisors.push_back(static_cast<int64_t>(next() >> 33) + 1);
  for (int64_t d : divisors) {
    const uint64_t bits = divider_bits(d);
    const auto m = static_cast<uint32_t>(bits), s = static_cast<uint32_t>(bits >> 32);
    std::vector<uint32_t> numerators{0, 1, static_cast<uint32_t>(d - 1), static_cast<uint32_t>(std::min<int64_t>(d, 0x7fffffff)),
                                     0x7ffffffeu, 0x7fffffffu};
    for (int k = 0; k < 50; ++k) numerators.push_back(static_cast<uint32_t>(next() >> 33));
    for (uint32_t n : numerators) {
      const auto high = static_cast<uint32_t>((uint64_t{n} * m) >> 32);
      ASSERT_EQ((high + n) >> s, n / static_cast<uint64_t>(d)) << n << " / " << d;
    }
  }
  EXPECT_EQ(divider_bits(0), divider_bits(1));  // an empty extent divides nothing
}

TEST(CudaSchedule, Transpose_TiledWithLoadsBeforeBarrier) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {96, 80});
  Value* b = f.add_tensor_input("b", DType::Float32, {80, 96});
  f.add_output(f.add(OpKind::Add, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}), b}));
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_THAT(k.source, HasSubstr("[64][64 + 1]"));
  // b's loads of the thread's 16 rows go to registers before the barrier.
  const size_t hoisted = k.source.find("float h");
  ASSERT_NE(hoisted, std::string::npos) << k.source;
  EXPECT_NE(k.source.find("__syncthreads()", hoisted), std::string::npos);
  EXPECT_EQ(k.abi.block_size, 256);
  EXPECT_GE(k.abi.blocks_per_sm, 1);
  EXPECT_LE(k.abi.blocks_per_sm, 4);
  // The packed variant, chosen at run time: 16-byte loads of a along p and of b along the
  // innermost dim, all before the barrier, and 16-byte stores.
  EXPECT_THAT(k.source, HasSubstr("const bool n0_packed = (n0_s0 % 4 == 0) & (n0_s1 % 4 == 0) & vf_aligned(a.f"));
  const size_t packed = k.source.find("if (n0_packed) {");
  ASSERT_NE(packed, std::string::npos);
  const size_t x_pack = k.source.find("x0[r] = *(const vf_pack<float, 4>*)", packed);
  const size_t b_pack = k.source.find("h1[r] = *(const vf_pack<float, 4>*)", packed);
  const size_t barrier = k.source.find("__syncthreads()", packed);
  EXPECT_LT(x_pack, b_pack);
  EXPECT_LT(b_pack, barrier);
  EXPECT_THAT(k.source.substr(barrier), HasSubstr("*(vf_pack<float, 4>*)((float*)a.f"));
}

TEST(CudaSchedule, TransposeOfTwoInputs_ElementTilesOnly) {
  // Two tiled f32 loads in tiles of 64 and one more load hold 48 registers of a thread's tile: more
  // than the packed variant's 40, and the element tiles are not staged either.
  Fusion f;
  Value* b = f.add_tensor_input("b", DType::Float32, {80, 96});
  Value* sum = b;
  for (const char* name : {"a0", "a1"}) {
    Value* a = f.add_tensor_input(name, DType::Float32, {96, 80});
    sum = f.add(OpKind::Add, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}), sum});
  }
  f.add_output(sum);
  const GeneratedKernel k = generate_kernel(contiguous_spec(f), Target::Cuda);
  EXPECT_THAT(k.source, HasSubstr("[64][64 + 1]"));
  EXPECT_THAT(k.source, Not(HasSubstr("packed")));
}

TEST(CudaSchedule, SchedulesCompileWithNvrtc) {
  VF_TEST_REQUIRE_NVRTC();
  std::vector<std::unique_ptr<Fusion>> fusions;
  auto add = [&](auto build) {
    fusions.push_back(std::make_unique<Fusion>());
    build(*fusions.back());
  };
  add([](Fusion& f) { merge_heads(f, {16, 32, 2048, 128}); });
  add([](Fusion& f) { merge_heads(f, {2, 3, 5, 4}, DType::Float16); });  // not a multiple of the pack
  add([](Fusion& f) {
    Value* a = f.add_tensor_input("a", DType::Float64, {96, 80});
    f.add_output(f.add(OpKind::Exp, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}})}));
  });
  add([](Fusion& f) {
    Value* x = f.add_tensor_input("x", DType::BFloat16, {1 << 20});
    f.add_output(f.add(OpKind::Mul, {f.add(OpKind::Add, {x, x}), x}));
  });
  for (const auto& f : fusions) {
    test::expect_sm90_cubin(generate_kernel(contiguous_spec(*f), Target::Cuda));
  }
}

}  // namespace
}  // namespace vf
