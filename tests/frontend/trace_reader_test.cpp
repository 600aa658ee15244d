// The trace reader on well-formed traces: each syntax form, torch spellings, scalars, annotations.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/trace_reader.h"
#include "ir/print_trace.h"

namespace vf {
namespace {

const Node& node(const Fusion& f, size_t i) { return *f.nodes().at(i); }

TEST(TraceReader, SeedSnippet_TransposeThenReshape) {
  Fusion f = read_trace(R"(
def computation(t_2):
  # t_2: "cuda:0 f32[2, 16, 8, 16]"
  t1 = torch.permute(t_2, [0, 2, 1, 3])  # t1: "cuda:0 f32[2, 8, 16, 16]"
    # t1 = ltorch.permute(t_2, [0, 2, 1, 3])  # t1: "cuda:0 f32[2, 8, 16, 16]"
      # t1 = prims.transpose(t_2, (0, 2, 1, 3))  # t1: "cuda:0 f32[2, 8, 16, 16]"
  del t_2
  t3 = torch.reshape(t1, (2, 8, 256))  # t3: "cuda:0 f32[2, 8, 256]"
  return t3
)");
  ASSERT_EQ(f.inputs().size(), 1u);
  EXPECT_EQ(f.inputs()[0]->name, "t_2");
  EXPECT_EQ(f.inputs()[0]->shape, (Shape{2, 16, 8, 16}));
  ASSERT_EQ(f.nodes().size(), 2u);
  EXPECT_EQ(node(f, 0).op, OpKind::Transpose);
  EXPECT_EQ(node(f, 0).attr<PermuteAttrs>().permutation, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(node(f, 0).line, 4);
  EXPECT_EQ(node(f, 1).op, OpKind::Reshape);
  EXPECT_EQ(node(f, 1).output()->name, "t3");
  ASSERT_EQ(f.outputs().size(), 1u);
  EXPECT_EQ(f.outputs()[0]->shape, (Shape{2, 8, 256}));
}

TEST(TraceReader, HeadlessSnippet_InputsFromAnnotationsOutputsUnused) {
  Fusion f = read_trace(R"(
  # t_2: "cuda:0 f32[2, 16, 8, 16]"
  t1 = torch.permute(t_2, [0, 2, 1, 3])  # t1: "cuda:0 f32[2, 8, 16, 16]"
  del t_2
  t3 = torch.reshape(t1, (2, 8, 256))  # t3: "cuda:0 f32[2, 8, 256]"
)");
  ASSERT_EQ(f.inputs().size(), 1u);
  ASSERT_EQ(f.outputs().size(), 1u);
  EXPECT_EQ(f.outputs()[0]->name, "t3");
}

TEST(TraceReader, ReferenceExample_VarMeanTupleAndConvert) {
  Fusion f = read_trace(R"(
def computation(t_2, w):
  # t_2: "cuda:0 f32[2, 16, 8, 16]"
  # w: "cuda:0 bf16[256]"
  t1 = prims.transpose(t_2, (0, 2, 1, 3))  # t1: "cuda:0 f32[2, 8, 16, 16]"
  del t_2
  t3 = prims.reshape(t1, (2, 8, 256))  # t3: "cuda:0 f32[2, 8, 256]"
  t4 = prims.convert_element_type(w, dtypes.float32)  # t4: "cuda:0 f32[256]"
  t5 = prims.broadcast_in_dim(t4, (2, 8, 256), (2,))  # t5: "cuda:0 f32[2, 8, 256]"
  t6 = prims.mul(t3, t5)  # t6: "cuda:0 f32[2, 8, 256]"
  (t7, t8) = prims.var_mean(t6, (2,), correction=0)
  return (t6, t7)
)");
  ASSERT_EQ(f.nodes().size(), 6u);
  EXPECT_EQ(node(f, 2).attr<CastAttrs>().dtype, DType::Float32);
  EXPECT_EQ(node(f, 3).attr<BroadcastAttrs>().broadcast_dims, (std::vector<int64_t>{2}));
  const Node& vm = node(f, 5);
  EXPECT_EQ(vm.op, OpKind::VarMean);
  EXPECT_EQ(vm.attr<VarAttrs>().correction, 0.0);
  EXPECT_EQ(vm.outputs[0]->name, "t7");
  EXPECT_EQ(vm.outputs[1]->name, "t8");
  ASSERT_EQ(f.outputs().size(), 2u);
  EXPECT_EQ(f.outputs()[1]->name, "t7");
  EXPECT_EQ(f.outputs()[1]->shape, (Shape{2, 8}));
}

TEST(TraceReader, TupleTargetForms_AllAccepted) {
  for (const char* target : {"a, b", "(a, b)", "[a, b]"}) {
    std::string text = std::string("def f(x):\n  # x: \"cpu f64[3, 4]\"\n  ") + target +
                       " = prims.var_mean(x, (1,), correction=1)\n  return [a, b]\n";
    Fusion f = read_trace(text);
    ASSERT_EQ(f.outputs().size(), 2u) << target;
    EXPECT_EQ(f.outputs()[0]->name, "a");
    EXPECT_EQ(f.outputs()[1]->dtype, DType::Float64);
  }
}

TEST(TraceReader, ReturnDict_TakesOutputEntry) {
  Fusion f = read_trace(R"(
@torch.no_grad()
@no_autocast
def f(x):
  # x: "meta i32[4]"
  y = prims.neg(x)
  return {'output': y, 'flat_args': [x]}
)");
  ASSERT_EQ(f.outputs().size(), 1u);
  EXPECT_EQ(f.outputs()[0]->name, "y");
  EXPECT_EQ(f.outputs()[0]->dtype, DType::Int32);
}

TEST(TraceReader, ReturnInput_IsAnOutput) {
  Fusion f = read_trace("def f(x):\n  # x: \"cpu f32[]\"\n  return x\n");
  ASSERT_EQ(f.outputs().size(), 1u);
  EXPECT_TRUE(f.is_input(f.outputs()[0]));
  EXPECT_TRUE(f.outputs()[0]->shape.empty());
}

TEST(TraceReader, ScalarInputs_AllKinds) {
  Fusion f = read_trace(R"(
def f(x, a, n, b, c):
  # x: "cpu f32[2]"
  # a: "float 0.5"
  # n: "int 3"
  # b: "bool True"
  # c: "int"
  y = prims.mul(x, a)
  z = prims.add(y, n)
  return z
)");
  ASSERT_EQ(f.inputs().size(), 5u);
  EXPECT_FALSE(f.inputs()[1]->is_tensor);
  EXPECT_EQ(f.inputs()[1]->scalar_kind, ScalarKind::Float);
  EXPECT_EQ(f.inputs()[2]->scalar_kind, ScalarKind::Int);
  EXPECT_EQ(f.inputs()[3]->scalar_kind, ScalarKind::Bool);
  EXPECT_EQ(f.inputs()[4]->scalar_kind, ScalarKind::Int);
  EXPECT_EQ(node(f, 0).inputs[1], f.inputs()[1]);
}

TEST(TraceReader, NumberLiterals_BecomeConstants) {
  Fusion f = read_trace(R"(
def f(x, i, m):
  # x: "cpu f32[2]"
  # i: "cpu i64[2]"
  # m: "cpu b8[2]"
  a = prims.add(1.0, x)
  b = prims.add(x, 1e-05)
  c = prims.where(m, x, -float('inf'))
  d = prims.maximum(x, float('nan'))
  e = prims.add(i, -9223372036854775808)
  g = prims.bitwise_and(m, True)
  return (a, b, c, d, e, g)
)");
  ASSERT_EQ(f.nodes().size(), 6u);
  const Value* one = node(f, 0).inputs[0];
  ASSERT_TRUE(one->is_constant());
  EXPECT_EQ(one->constant->kind, ScalarKind::Float);
  EXPECT_EQ(one->constant->f, 1.0);
  EXPECT_EQ(node(f, 1).inputs[1]->constant->f, 1e-05);
  const Scalar& ninf = *node(f, 2).inputs[2]->constant;
  EXPECT_TRUE(std::isinf(ninf.f) && ninf.f < 0);
  EXPECT_TRUE(std::isnan(node(f, 3).inputs[1]->constant->f));
  EXPECT_EQ(node(f, 4).inputs[1]->constant->i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(node(f, 5).inputs[1]->constant->kind, ScalarKind::Bool);
}

TEST(TraceReader, TorchSpellings_MapToPrims) {
  Fusion f = read_trace(R"(
def f(x, y, p):
  # x: "cpu f32[2, 3, 4]"
  # y: "cpu f32[2, 3, 4]"
  # p: "cpu f32[3, 1]"
  a = torch.permute(x, [2, 0, 1])
  b = torch.reshape(x, (6, -1))
  c = Tensor.view(x, 2, 12)
  d = Tensor.expand(p, (2, 3, 5))
  e = torch.unsqueeze(x, -1)
  g = torch.cat((x, y), -1)
  h = torch_slice_prim_impl(x, [0, 1, 0], [2, 3, 4], [1, 2, 1])
  i = torch.squeeze(p, 1)
  j = torch.transpose(x, 0, -1)
  k = torch.flatten(x, 1, 2)
  l = ltorch.reshape(x, [24])
  m = torch.Tensor.expand(p, -1, 7)
  return (a, b, c, d, e, g, h, i, j, k, l, m)
)");
  ASSERT_EQ(f.nodes().size(), 12u);
  EXPECT_EQ(node(f, 0).op, OpKind::Transpose);
  EXPECT_EQ(node(f, 0).output()->shape, (Shape{4, 2, 3}));
  EXPECT_EQ(node(f, 1).attr<ReshapeAttrs>().shape, (Shape{6, 4}));
  EXPECT_EQ(node(f, 2).attr<ReshapeAttrs>().shape, (Shape{2, 12}));
  EXPECT_EQ(node(f, 3).op, OpKind::BroadcastInDim);
  EXPECT_EQ(node(f, 3).attr<BroadcastAttrs>().broadcast_dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(node(f, 3).output()->shape, (Shape{2, 3, 5}));
  EXPECT_EQ(node(f, 4).attr<BroadcastAttrs>().shape, (Shape{2, 3, 4, 1}));
  EXPECT_EQ(node(f, 4).attr<BroadcastAttrs>().broadcast_dims, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(node(f, 5).op, OpKind::Cat);
  EXPECT_EQ(node(f, 5).attr<AxisAttrs>().dim, 2);
  EXPECT_EQ(node(f, 5).output()->shape, (Shape{2, 3, 8}));
  EXPECT_EQ(node(f, 6).op, OpKind::SlicePrim);
  EXPECT_EQ(node(f, 6).output()->shape, (Shape{2, 1, 4}));
  EXPECT_EQ(node(f, 7).op, OpKind::Squeeze);
  EXPECT_EQ(node(f, 7).output()->shape, (Shape{3}));
  EXPECT_EQ(node(f, 8).attr<PermuteAttrs>().permutation, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(node(f, 9).attr<ReshapeAttrs>().shape, (Shape{2, 12}));
  EXPECT_EQ(node(f, 10).attr<ReshapeAttrs>().shape, (Shape{24}));
  EXPECT_EQ(node(f, 11).output()->shape, (Shape{3, 7}));
}

// PyTorch's dtype aliases mean what they mean in PyTorch: torch.int is int32, torch.long int64.
TEST(TraceReader, TorchDTypeAliases_AsInPyTorch) {
  const std::pair<const char*, DType> cases[] = {
      {"torch.int", DType::Int32},       {"torch.long", DType::Int64},     {"torch.short", DType::Int16},
      {"torch.half", DType::Float16},    {"torch.float", DType::Float32},  {"torch.double", DType::Float64},
      {"dtypes.bool8", DType::Bool},     {"dtypes.int32_", DType::Int32},  {"torch.bfloat16", DType::BFloat16},
      {"thunder.dtypes.uint8", DType::UInt8},
  };
  for (const auto& [spelling, dtype] : cases) {
    const Fusion f = read_trace(std::string("def f(x):\n  # x: \"cpu f32[2]\"\n  y = prims.convert_element_type(x, ") +
                                spelling + ")\n  return y\n");
    EXPECT_EQ(f.outputs()[0]->dtype, dtype) << spelling;
  }
}

TEST(TraceReader, PrimAttributes_KeywordAndPositional) {
  Fusion f = read_trace(R"(
def f(x, v):
  # x: "cpu f32[4, 5]"
  # v: "float"
  a = prims.slice_prim(x, (1, 0), (3, 5), strides=None)
  b = prims.pad(x, 0.0, ((1, 2, 0), (0, -1, 1)))
  c = prims.pad(x, v, padding_config=((0, 0, 0), (0, 0, 0)))
  d = prims.full((2, 3), 7, device=devices.Device("cuda:0"), dtype=dtypes.int32)
  e = prims.iota(5, start=2, step=3, device=devices.Device("cpu"), dtype=dtypes.int64)
  g = prims.var(x, (0, 1), correction=0.5)
  h = prims.sum(x, (-1,))
  k = prims.flip(x, (0,))
  return (a, b, c, d, e, g, h, k)
)");
  EXPECT_EQ(node(f, 0).attr<SliceAttrs>().step, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(node(f, 0).output()->shape, (Shape{2, 5}));
  EXPECT_EQ(node(f, 1).attr<PadAttrs>().config[1], (PadDim{0, -1, 1}));
  EXPECT_EQ(node(f, 1).output()->shape, (Shape{7, 8}));  // 4+1+2, 5+4*1+0-1
  EXPECT_TRUE(node(f, 1).inputs[1]->is_constant());
  EXPECT_EQ(node(f, 2).inputs[1], f.inputs()[1]);
  EXPECT_EQ(node(f, 3).attr<FullAttrs>().dtype, DType::Int32);
  EXPECT_EQ(node(f, 3).attr<FullAttrs>().value, Scalar::from_int(7));
  EXPECT_EQ(node(f, 4).attr<IotaAttrs>(), (IotaAttrs{5, 2, 3, DType::Int64}));
  EXPECT_EQ(node(f, 5).attr<VarAttrs>().correction, 0.5);
  EXPECT_EQ(node(f, 6).attr<DimsAttrs>().dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(node(f, 7).op, OpKind::Flip);
}

TEST(TraceReader, AliasAndLineContinuation_Accepted) {
  Fusion f = read_trace("import torch\nfrom thunder import dtypes\ndef f(x):\n  # x: \"cpu f32[2]\"\n"
                        "  y = prims.add(x,\n      x)  # y: \"cpu f32[2]\"\n  z = y\n  w = prims.exp(\\\n  z)\n"
                        "  return w\n");
  ASSERT_EQ(f.nodes().size(), 2u);
  EXPECT_EQ(node(f, 1).inputs[0]->name, "y");
}

TEST(TraceReader, ReadFile_ReadsExample) {
  Fusion f = read_trace_file(std::string(VF_SOURCE_DIR) + "/examples/transpose_add.py");
  ASSERT_EQ(f.nodes().size(), 2u);
  EXPECT_EQ(f.outputs()[0]->shape, (Shape{16, 24}));
}

// Found by libFuzzer: a headless trace's comment "# 0: ..." declared an input named 0, whose
// printed trace did not read back. Annotation names are identifiers.
TEST(TraceReader, HeadlessCommentWithNumberName_NotAnInput) {
  const std::string text =
      "# A 2-D transpose\n"
      "  # a: \"cuda:0 f32[24, 16]\"\n"
      "  # 0: \"cuda:0 f32[17, 24]\"\n"
      "  t0 = prims.transpose(a, (1, 0))\n"
      "  return t0\n";
  const Fusion f = read_trace(text, "headless");
  ASSERT_EQ(f.inputs().size(), 1u);
  EXPECT_EQ(f.inputs()[0]->name, "a");
  EXPECT_EQ(print_trace(read_trace(print_trace(f), "printed")), print_trace(f));
}

}  // namespace
}  // namespace vf
