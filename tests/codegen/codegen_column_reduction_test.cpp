// Column reductions (kernel_ir.h serial nests): chunks of rows reduced per column, in the kernel of
// the rows' other work, against the reference executor on the CPU and, where there is a GPU, on
// CUDA: every op, dtypes, column extents on both of CUDA's row loops (registers and strided),
// rows whose alignment alternates, several column dims; beside row reductions and full-shape
// outputs (a norm's backward, with and without the ring of rows ahead in shared memory); a warp per
// row (warp rows); and planned from a plain reduction over the leading dims
// (passes/split_column_reductions.h).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "backend_test.h"
#include "golden_support.h"
#include "codegen/lower_kernel.h"
#include "codegen_test_util.h"
#include "frontend/trace_reader.h"
#include "reference/random_inputs.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ColumnReductions : public test::BackendTest {};

// op over the C dim of x [rows..., R, columns...] reshaped to [rows..., R / C, C, columns...]:
// each chunk's partial result, which the fusion returns.
std::shared_ptr<Fusion> chunk_reduction(OpKind op, DType dtype, const Shape& rows, int64_t chunk, const Shape& columns) {
  auto f = std::make_shared<Fusion>();
  Shape shape = rows;
  shape.insert(shape.end(), columns.begin(), columns.end());
  Value* x = f->add_tensor_input("x", dtype, shape);
  Shape chunks = rows;
  chunks.back() /= chunk;
  chunks.push_back(chunk);
  chunks.insert(chunks.end(), columns.begin(), columns.end());
  Value* y = f->add(OpKind::Reshape, {x}, ReshapeAttrs{chunks});
  f->add_output(f->add(op, {y}, DimsAttrs{{static_cast<int64_t>(rows.size())}}));
  return f;
}

TEST_P(ColumnReductions, EveryOpAndDtype_OneSerialKernelMatchesReference) {
  uint64_t seed = 900;
  for (OpKind op : {OpKind::Sum, OpKind::Prod, OpKind::Amax, OpKind::Amin}) {
    for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::BFloat16}) {
      if (is_half(dtype) && (op == OpKind::Sum || op == OpKind::Prod)) continue;  // partial sums are float32
      SCOPED_TRACE(std::string(op_name(op)) + " " + std::string(dtype_short_name(dtype)));
      auto f = chunk_reduction(op, dtype, {3, 24}, 8, {40});
      const Plan plan = check(f, random_inputs(*f, seed++), 8);
      ASSERT_EQ(plan.kernel_count(), 1);
      EXPECT_TRUE(plan.segments[0].kernel->nests[0].serial);
    }
  }
}

// Columns on CUDA's registers path (a multiple of the pack, short) and its strided loop (odd, long),
// several column dims, one chunk per row dim, and chunks as long as a team walks.
TEST_P(ColumnReductions, ColumnExtentsAndChunks_MatchReference) {
  struct Case {
    Shape rows;
    int64_t chunk;
    Shape columns;
  };
  const std::vector<Case> cases = {{{64}, 4, {64}},     {{64}, 4, {33}},      {{2, 32}, 16, {3000}},
                                   {{48}, 2, {5, 12}},  {{128}, 64, {40}},    {{8}, 8, {1}},
                                   {{4, 6}, 3, {8200}}, {{2, 2, 16}, 8, {96}}};
  uint64_t seed = 910;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.rows) + " chunks of " + std::to_string(c.chunk) + " columns " +
                 shape_to_string(c.columns));
    auto f = chunk_reduction(OpKind::Sum, DType::Float32, c.rows, c.chunk, c.columns);
    EXPECT_EQ(check(f, random_inputs(*f, seed++), c.chunk).kernel_count(), 1);
  }
}

// bf16 rows of 40 in a tensor of rows of 44: every other row starts off a 16-byte boundary, so
// CUDA's rows alternate between the packed and the strided loop, whose lanes own other columns.
TEST_P(ColumnReductions, RowsOfAlternatingAlignment_MatchReference) {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::BFloat16, {64, 40});
  Value* wide = f->add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
  Value* chunks = f->add(OpKind::Reshape, {wide}, ReshapeAttrs{{8, 8, 40}});
  f->add_output(f->add(OpKind::Sum, {chunks}, DimsAttrs{{1}}));
  f->add_output(f->add(OpKind::Amax, {wide}, DimsAttrs{{1}}));  // a row reduction beside it
  const HostTensor base = random_tensor(DType::BFloat16, {64, 44}, 920);
  const HostTensor sliced = HostTensor::view_of(DType::BFloat16, Layout{{64, 40}, {44, 1}, 0}, base.storage());
  EXPECT_EQ(check(f, {sliced}, 8).kernel_count(), 1);
}

// A layer norm's backward (tests/segment/golden/layer_norm_backward.py, 1024 rows of 64): the input
// gradient from two row sums, and the weight's and bias's gradients summed over the rows: one pass
// over the rows, then the partials' kernel.
TEST_P(ColumnReductions, NormBackward_RowAndColumnSumsInOnePass) {
  auto f = std::make_shared<Fusion>(
      read_trace_file(std::string(VF_SOURCE_DIR) + "/tests/segment/golden/layer_norm_backward.py"));
  const Plan plan = check(f, random_inputs(*f, 930), 1024);
  ASSERT_EQ(plan.kernel_count(), 2);
  EXPECT_EQ(plan.rewrites.size(), 2u);
  EXPECT_TRUE(plan.segments[0].kernel->nests[0].serial);
  EXPECT_EQ(plan.segments[0].outputs.size(), 3u);  // dx and the two partials
  EXPECT_EQ(plan.segments[0].bytes_read, 1024 * 64 * (2 + 4) + 2 * 1024 * 4 + 64 * 2);  // each input once
}

// Llama's RMS norm backward with the norm weight's gradient (tests/segment/model_regions/
// llama2_013.py) at 1024 rows of 2048, whose rows held twice do not fit in registers: with the
// ring of rows in shared memory (schedule "async", cp.async, VF_ENABLE_SCHEDULES) and without it
// (no rows ahead), the
// same values, bit for bit (the ring changes where a row is read from, not the arithmetic; the
// arithmetic is checked against the reference above); the CUDA source has the ring only with it.
TEST_P(ColumnReductions, NormBackwardRing_SameValuesWithAndWithout) {
  std::string text = test::read_text_file(std::string(VF_SOURCE_DIR) + "/tests/segment/model_regions/llama2_013.py");
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  };
  replace_all("4, 2048", "1, 1024");
  replace_all("8192, 2048", "1024, 2048");
  std::string body;  // without the layout lines: contiguous inputs
  for (size_t at = 0, end; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, 9, "# layout ") != 0) body += text.substr(at, end - at) + "\n";
  }
  auto f = std::make_shared<Fusion>(read_trace(body));
  const std::vector<HostArg> inputs = random_inputs(*f, 931);
  std::vector<std::vector<HostTensor>> outs;
  for (const char* enabled : {"async", ""}) {
    SCOPED_TRACE(std::string("enabled: ") + enabled);
    const test::ScopedEnv env("VF_ENABLE_SCHEDULES", enabled);
    Plan plan;
    outs.push_back(run(f, inputs, &plan));
    ASSERT_EQ(plan.kernel_count(), 2);
    const GeneratedKernel k = generate_kernel(plan.segments[0].spec, *plan.segments[0].kernel, Target::Cuda);
    EXPECT_EQ(k.source.find("vf_cp_async(&") != std::string::npos, *enabled != '\0');
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  for (size_t o = 0; o < outs[0].size(); ++o) {
    const Comparison c = compare_tensors(outs[0][o], outs[1][o], Tolerance{});
    EXPECT_TRUE(c.ok) << "output " << f->outputs()[o]->name << ": " << c.first_mismatch;
  }
}

// Warp rows (schedule "warp-rows"; ReductionSchedule::warps): a warp per row,
// four rows of a chunk at once, the warps' column sums added in shared memory at the chunk's end.
// x [R, C] with a row sum, a full-shape output that reads it and the chunks' column sums: chunks
// of fewer rows than warps (warps without rows), of a number of rows that four does not divide,
// rows of one partial group and of three groups a lane, and rows of alternating alignment (the
// chunk walked by warp 0 alone, the strided loop).
TEST_P(ColumnReductions, WarpRows_MatchReference) {
  struct Case {
    int64_t rows, chunk, columns, stride;
    DType dtype;
  };
  const Case cases[] = {{64, 8, 40, 40, DType::BFloat16}, {48, 2, 64, 64, DType::Float32},
                        {60, 6, 768, 768, DType::BFloat16}, {96, 3, 256, 256, DType::Float32},
                        {64, 8, 40, 44, DType::BFloat16}};
  const test::ScopedEnv env("VF_DISABLE_SCHEDULES", "");
  uint64_t seed = 940;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.rows) + " rows of " + std::to_string(c.columns) + " (stride " +
                 std::to_string(c.stride) + ") in chunks of " + std::to_string(c.chunk));
    auto f = std::make_shared<Fusion>();
    Value* x = f->add_tensor_input("x", c.dtype, {c.rows, c.columns});
    Value* wide = c.dtype == DType::Float32 ? x : f->add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
    Value* row_sum = f->add(OpKind::Sum, {wide}, DimsAttrs{{1}});
    f->add_output(row_sum);
    f->add_output(f->add(OpKind::Mul, {wide, f->add(OpKind::BroadcastInDim, {row_sum},
                                                    BroadcastAttrs{{c.rows, c.columns}, {0}})}));
    Value* chunks = f->add(OpKind::Reshape, {wide}, ReshapeAttrs{{c.rows / c.chunk, c.chunk, c.columns}});
    f->add_output(f->add(OpKind::Sum, {chunks}, DimsAttrs{{1}}));
    const HostTensor base = random_tensor(c.dtype, {c.rows, c.stride}, seed++);
    const HostTensor input =
        HostTensor::view_of(c.dtype, Layout{{c.rows, c.columns}, {c.stride, 1}, 0}, base.storage());
    const Plan plan = check(f, {input}, c.columns);
    ASSERT_EQ(plan.kernel_count(), 1);
    ASSERT_TRUE(plan.segments[0].kernel->nests[0].serial);
    const GeneratedKernel k = generate_kernel(plan.segments[0].spec, *plan.segments[0].kernel, Target::Cuda);
    EXPECT_THAT(k.source, HasSubstr("const int warp = threadIdx.x / 32;"));
  }
}

// Rows of 2,048 bf16 with two column sums: a warp's lanes would take 64 columns each, whose sums
// for four warps (64 KB) pass the 32 KB warp rows may keep in shared memory: the team of 128 takes
// the rows instead, and the CUDA source compiles (NVRTC on the CPU machine).
TEST_P(ColumnReductions, WarpRowsBeyondSharedMemory_TeamPerRow) {
  const test::ScopedEnv env("VF_DISABLE_SCHEDULES", "");
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::BFloat16, {64, 2048});
  Value* wide = f->add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
  f->add_output(f->add(OpKind::Sum, {wide}, DimsAttrs{{1}}));
  f->add_output(f->add(OpKind::Sum, {f->add(OpKind::Reshape, {wide}, ReshapeAttrs{{4, 16, 2048}})}, DimsAttrs{{1}}));
  Value* squares = f->add(OpKind::Mul, {wide, wide});
  f->add_output(f->add(OpKind::Sum, {f->add(OpKind::Reshape, {squares}, ReshapeAttrs{{4, 16, 2048}})}, DimsAttrs{{1}}));
  const Plan plan = check(f, random_inputs(*f, 950), 2048);
  ASSERT_EQ(plan.kernel_count(), 1);
  ASSERT_TRUE(plan.segments[0].kernel->nests[0].serial);
  const GeneratedKernel k = generate_kernel(plan.segments[0].spec, *plan.segments[0].kernel, Target::Cuda);
  EXPECT_THAT(k.source, Not(HasSubstr("const int warp = threadIdx.x / 32;")));
  EXPECT_THAT(k.source, HasSubstr("__launch_bounds__(128, 4)"));
}

INSTANTIATE_TEST_SUITE_P(Backends, ColumnReductions, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

// What one serial kernel cannot hold, named.
TEST(ColumnReductionLowering, ProblemsNamed) {
  auto halves = chunk_reduction(OpKind::Sum, DType::BFloat16, {64}, 8, {40});
  EXPECT_THAT(lower_kernel(test::contiguous_spec(*halves)).problem, HasSubstr("sums chunks in bfloat16"));
  // Two chunkings in one segment.
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {64, 40});
  f.add_output(f.add(OpKind::Sum, {f.add(OpKind::Reshape, {x}, ReshapeAttrs{{8, 8, 40}})}, DimsAttrs{{1}}));
  f.add_output(f.add(OpKind::Sum, {f.add(OpKind::Reshape, {x}, ReshapeAttrs{{16, 4, 40}})}, DimsAttrs{{1}}));
  EXPECT_THAT(lower_kernel(test::contiguous_spec(f)).problem, HasSubstr("the kernel's chunks are of 8"));
  // A partial read by the kernel that computes it.
  Fusion g;
  Value* y = g.add_tensor_input("y", DType::Float32, {64, 40});
  Value* p = g.add(OpKind::Sum, {g.add(OpKind::Reshape, {y}, ReshapeAttrs{{8, 8, 40}})}, DimsAttrs{{1}});
  Value* spread = g.add(OpKind::BroadcastInDim, {p}, BroadcastAttrs{{8, 8, 40}, {0, 2}});
  g.add_output(g.add(OpKind::Add, {y, g.add(OpKind::Reshape, {spread}, ReshapeAttrs{{64, 40}})}));
  EXPECT_THAT(lower_kernel(test::contiguous_spec(g)).problem, HasSubstr("is read in its own kernel"));
  // Chunks longer than a team walks are an ordinary reduction over the middle dim.
  auto long_chunks = chunk_reduction(OpKind::Sum, DType::Float32, {256}, 128, {40});
  const LoweredKernel lowered = lower_kernel(test::contiguous_spec(*long_chunks));
  ASSERT_TRUE(lowered.ok()) << lowered.problem;
  EXPECT_FALSE(lowered.ir.nests[0].serial);
}

}  // namespace
}  // namespace vf
