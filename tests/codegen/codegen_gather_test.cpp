// take, take_along_axis and gather in kernels (kernel_ir.h IndexOp::Gathered), against the reference
// executor on the CPU and, where there is a GPU, on CUDA: an embedding with its positions in one
// kernel, sources that are views and computed values, index tensors that are views and computed,
// gathers inside a reduction's operand and beside one (cross-entropy), the dtypes of the index and
// of the source, and an index out of range (a UserError on the CPU, 0 on CUDA).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cstring>

#include "backend_test.h"
#include "codegen/lower_kernel.h"
#include "codegen_test_util.h"
#include "reference/random_inputs.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

class Gathers : public test::BackendTest {};

// ids [B, S] into wte [V, C], plus the positions' rows of wpe [S, C]: Thunder's GPT embedding.
std::shared_ptr<Fusion> embedding(DType index_dtype, DType dtype, int64_t b, int64_t s, int64_t v, int64_t c) {
  auto f = std::make_shared<Fusion>();
  Value* ids = f->add_tensor_input("ids", index_dtype, {b, s});
  Value* wte = f->add_tensor_input("wte", dtype, {v, c});
  Value* wpe = f->add_tensor_input("wpe", dtype, {s, c});
  Value* flat = f->add(OpKind::Reshape, {ids}, ReshapeAttrs{{b * s}});
  Value* tok = f->add(OpKind::Reshape, {f->add(OpKind::Take, {wte, flat}, AxisAttrs{0})}, ReshapeAttrs{{b, s, c}});
  Value* pos = f->add(OpKind::Iota, {}, IotaAttrs{s, 0, 1, DType::Int64});
  Value* pe = f->add(OpKind::Take, {wpe, pos}, AxisAttrs{0});
  f->add_output(f->add(OpKind::Add, {tok, f->add(OpKind::BroadcastInDim, {pe}, BroadcastAttrs{{b, s, c}, {1, 2}})}));
  return f;
}

TEST_P(Gathers, EmbeddingWithPositions_OneKernelMatchesReference) {
  struct Case {
    DType index, dtype;
    int64_t b, s, v, c;
  };
  // Rows of 256 bf16 and 64 f32 (CUDA's pack-sized rows), odd rows, and int32 ids.
  const std::vector<Case> cases = {{DType::Int64, DType::Float32, 2, 8, 50, 64},
                                   {DType::Int64, DType::BFloat16, 4, 16, 300, 256},
                                   {DType::Int32, DType::Float32, 3, 5, 7, 13},
                                   {DType::Int64, DType::Float16, 1, 1, 1, 3}};
  uint64_t seed = 1200;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(dtype_short_name(k.index)) + " ids into " + std::string(dtype_short_name(k.dtype)) + "[" +
                 std::to_string(k.v) + ", " + std::to_string(k.c) + "]");
    auto f = embedding(k.index, k.dtype, k.b, k.s, k.v, k.c);
    EXPECT_EQ(check(f, random_inputs(*f, seed++), 1).kernel_count(), 1);
  }
}

// Sources read through views (a transpose, a step slice, an expand) and computed (exp of a
// transpose, which reshapes to split the gathered dim: div and mod of a loaded index), a 0-D
// index, and an index that is itself computed from another input.
TEST_P(Gathers, ViewAndComputedSources_MatchReference) {
  auto f = std::make_shared<Fusion>();
  Value* w = f->add_tensor_input("w", DType::Float32, {6, 10});
  Value* idx = f->add_tensor_input("idx", DType::Int64, {7});
  Value* one = f->add_tensor_input("one", DType::Int32, {});
  Value* wt = f->add(OpKind::Transpose, {w}, PermuteAttrs{{1, 0}});  // [10, 6]
  f->add_output(f->add(OpKind::Take, {wt, idx}, AxisAttrs{1}));      // idx < 6
  Value* every_other = f->add(OpKind::SlicePrim, {w}, SliceAttrs{{0, 0}, {6, 10}, {1, 2}});  // [6, 5]
  f->add_output(f->add(OpKind::Take, {every_other, idx}, AxisAttrs{0}));
  Value* expanded = f->add(OpKind::BroadcastInDim, {w}, BroadcastAttrs{{3, 6, 10}, {1, 2}});
  f->add_output(f->add(OpKind::Take, {expanded, idx}, AxisAttrs{-2}));
  // exp(w)^T [10, 6] reshaped to [60]: element k is exp(w)[k % 6][k / 6].
  Value* flat = f->add(OpKind::Reshape, {f->add(OpKind::Exp, {wt})}, ReshapeAttrs{{60}});
  Value* scaled = f->add(OpKind::Mul, {idx, f->add_constant(Scalar::from_int(9))});  // < 60
  f->add_output(f->add(OpKind::Take, {flat, scaled}, AxisAttrs{0}));
  f->add_output(f->add(OpKind::Take, {w, one}, AxisAttrs{1}));  // a 0-D index: one column
  std::vector<HostArg> inputs = random_inputs(*f, 1300);
  EXPECT_EQ(check(f, inputs, 1).kernel_count(), 1);
}

// Cross-entropy's forward: the log-softmax of each row (a reduction), the target's element of each
// row (take_along_axis of a computed value) and the mean's sum over rows, and gather of the logits.
TEST_P(Gathers, CrossEntropyForward_MatchesReference) {
  for (DType dtype : {DType::Float32, DType::BFloat16}) {
    SCOPED_TRACE(dtype_short_name(dtype));
    const int64_t n = 37, v = 1000;
    auto f = std::make_shared<Fusion>();
    Value* logits = f->add_tensor_input("logits", dtype, {n, v});
    Value* target = f->add_tensor_input("target", DType::Int64, {n});
    Value* x = f->add(OpKind::ConvertElementType, {logits}, CastAttrs{DType::Float32});
    Value* m = f->add(OpKind::BroadcastInDim, {f->add(OpKind::Amax, {x}, DimsAttrs{{1}})}, BroadcastAttrs{{n, v}, {0}});
    Value* z = f->add(OpKind::Sub, {x, m});
    Value* lse = f->add(OpKind::Log, {f->add(OpKind::Sum, {f->add(OpKind::Exp, {z})}, DimsAttrs{{1}})});
    Value* logp = f->add(OpKind::Sub, {z, f->add(OpKind::BroadcastInDim, {lse}, BroadcastAttrs{{n, v}, {0}})});
    Value* t = f->add(OpKind::BroadcastInDim, {target}, BroadcastAttrs{{n, 1}, {0}});
    Value* picked = f->add(OpKind::TakeAlongAxis, {logp, t}, AxisAttrs{1});
    f->add_output(f->add(OpKind::Sum, {f->add(OpKind::Neg, {picked})}, DimsAttrs{{0, 1}}));
    f->add_output(logp);
    f->add_output(f->add(OpKind::Gather, {logits, t}, AxisAttrs{1}));
    check(f, random_inputs(*f, 1400), v);
  }
}

// gather with an index smaller than the source outside dim, inside a reduction's operand (each
// row sums the elements its indices pick: an embedding bag), and take along a reduced dim.
TEST_P(Gathers, InsideReductionOperands_MatchReference) {
  auto f = std::make_shared<Fusion>();
  Value* a = f->add_tensor_input("a", DType::Float32, {9, 40});
  Value* idx = f->add_tensor_input("idx", DType::Int64, {5, 300});
  Value* g = f->add(OpKind::Gather, {a, idx}, AxisAttrs{1});  // [5, 300], rows 0..4 of a
  f->add_output(f->add(OpKind::Sum, {g}, DimsAttrs{{1}}));
  f->add_output(f->add(OpKind::Amax, {g}, DimsAttrs{{0}}));
  auto inputs = random_inputs(*f, 1500);
  check(f, inputs, 300);
  auto bag = std::make_shared<Fusion>();
  Value* w = bag->add_tensor_input("w", DType::Float32, {50, 24});
  Value* ids = bag->add_tensor_input("ids", DType::Int64, {130});
  bag->add_output(bag->add(OpKind::Sum, {bag->add(OpKind::Take, {w, ids}, AxisAttrs{0})}, DimsAttrs{{0}}));
  check(bag, random_inputs(*bag, 1501), 130);
}

// An index outside [0, size): the CPU kernel reports it, naming the op and the value; a CUDA
// kernel reads nothing for that element and gives 0 (ir.h; compute-sanitizer runs this test).
TEST_P(Gathers, IndexOutOfRange_CpuReportsCudaGivesZero) {
  auto f = std::make_shared<Fusion>();
  Value* w = f->add_tensor_input("w", DType::Float32, {4, 3});
  Value* idx = f->add_tensor_input("idx", DType::Int64, {3});
  f->add_output(f->add_node(OpKind::Take, {w, idx}, AxisAttrs{0}, {"rows"}).at(0));
  CompiledFusion compiled(f, ExecutorOptions{.device = GetParam()}, backend_);
  HostTensor weights = random_tensor(DType::Float32, {4, 3}, 1600);
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{1} << 40}) {
    SCOPED_TRACE(bad);
    HostTensor ids = HostTensor::empty(DType::Int64, {3});
    const int64_t values[3] = {1, bad, 3};
    std::memcpy(ids.element(std::vector<int64_t>{0}.data()), values, sizeof values);
    std::vector<Arg> args{copy_to(to_tensor(weights), GetParam()), copy_to(to_tensor(ids), GetParam())};
    if (GetParam() == Device::Cpu) {
      try {
        compiled.run(args);
        ADD_FAILURE() << "no error for index " << bad;
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("prims.take rows (dim 0 of size 4 of w f32[4, 3]): index " +
                                        std::to_string(bad) + " is out of range"));
      }
      continue;
    }
    const HostTensor out = host_copy(compiled.run(args).at(0));
    for (int64_t j = 0; j < 3; ++j) {
      const int64_t at[2] = {1, j}, good[2] = {0, j}, source[2] = {1, j};
      EXPECT_EQ(out.get_double(at), 0.0);
      EXPECT_EQ(out.get_double(good), weights.get_double(source));
    }
  }
  // The reference names the element too.
  HostTensor ids = HostTensor::empty(DType::Int64, {3});
  const int64_t values[3] = {0, 0, 9};
  std::memcpy(ids.element(std::vector<int64_t>{0}.data()), values, sizeof values);
  try {
    run_reference(*f, {weights, ids});
    ADD_FAILURE() << "the reference took index 9";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("prims.take rows: index 9 is out of range for dim 0 of size 4 of w f32[4, 3] "
                                    "(at output element [2, 0])"));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Gathers, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

// The kernel IR of a gather: its index node reads the loaded index, guards the source's loads, and
// is written inline after the index's value in the C++ source.
TEST(GatherLowering, GatheredIndex_GuardsLoadsAndIsInline) {
  auto f = embedding(DType::Int64, DType::Float32, 2, 3, 10, 4);
  const LoweredKernel lowered = lower_kernel(test::contiguous_spec(*f));
  ASSERT_TRUE(lowered.ok()) << lowered.problem;
  const LoopNest& nest = lowered.ir.nests.at(0);
  int gathered = 0;
  for (const IndexExpr& e : nest.indices) gathered += e.op == IndexOp::Gathered;
  EXPECT_EQ(gathered, 2);  // the tokens' and the positions'
  EXPECT_FALSE(nest.flat);
  ASSERT_EQ(lowered.ir.abi.gathers.size(), 2u);
  EXPECT_THAT(lowered.ir.abi.gathers[0], HasSubstr("prims.take"));
  EXPECT_THAT(lowered.ir.abi.gathers[0], HasSubstr("(dim 0 of size 10 of wte f32[10, 4])"));
  const GeneratedKernel k = generate_kernel(test::contiguous_spec(*f), Target::Cpu);
  const std::string call = "vf_gathered((vf_i64)v";
  const size_t use = k.source.find(call);
  ASSERT_NE(use, std::string::npos) << k.source;
  const size_t at = use + call.size();
  const std::string value = k.source.substr(at, k.source.find(',', at) - at);
  const size_t def = k.source.find(" v" + value + " = ");
  EXPECT_LT(def, use) << "v" << value << " is used before it is defined:\n" << k.source;
}

}  // namespace
}  // namespace vf
