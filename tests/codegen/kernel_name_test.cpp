// Kernel entry names: the schedule kind and the fusion's ops, the same on every target and in explain.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "codegen/generate_kernel.h"
#include "codegen/kernel_name.h"
#include "frontend/trace_reader.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

// The generated kernel of a one-segment trace on a target.
GeneratedKernel generated(const Fusion& f, Target target) {
  const Plan plan = plan_fusion(f, contiguous_input_layouts(f), {});
  for (const Segment& s : plan.segments)
    if (s.kind == SegmentKind::Kernel) return generate_kernel(s.spec, *s.kernel, target);
  ADD_FAILURE() << "no kernel segment";
  return {};
}

TEST(KernelName, Softmax_ReductionWithItsOpsInProgramOrder) {
  const Fusion f = read_trace(R"(
def softmax(x):
  # x: "cuda:0 f32[64, 1000]"
  m = prims.amax(x, (1, ))
  mb = prims.broadcast_in_dim(m, (64, 1000, ), (0, ))
  d = prims.sub(x, mb)
  e = prims.exp(d)
  s = prims.sum(e, (1, ))
  sb = prims.broadcast_in_dim(s, (64, 1000, ), (0, ))
  y = prims.div(e, sb)
  return y
)");
  EXPECT_EQ(generated(f, Target::Cpu).entry, "vf_reduction_amax_sub_exp_sum_div");
  EXPECT_EQ(generated(f, Target::Cuda).entry, "vf_reduction_amax_sub_exp_sum_div");
}

// A bias gradient, [rows, 768] summed over the rows: in chunks of rows' partials when there are
// enough rows (passes/split_column_reductions.h), else one outer reduction.
TEST(KernelName, ColumnSum_ColumnOrOuterReduction) {
  auto bias_grad = [](int rows) {
    return read_trace("def bias_grad(g):\n  # g: \"cuda:0 bf16[" + std::to_string(rows) +
                      ", 768]\"\n  a = prims.convert_element_type(g, dtypes.float32)\n  s = prims.sum(a, (0, ))\n"
                      "  return s\n");
  };
  EXPECT_EQ(generated(bias_grad(4096), Target::Cuda).entry, "vf_column_reduction_sum");
  EXPECT_EQ(generated(bias_grad(64), Target::Cuda).entry, "vf_outer_reduction_sum");
}

TEST(KernelName, TransposeCopy_ViewsAndConversionsLeftOut) {
  const Fusion f = read_trace(R"(
def t(x):
  # x: "cuda:0 f32[64, 32]"
  y = prims.transpose(x, (1, 0, ))
  z = prims.convert_element_type(y, dtypes.bfloat16)
  return z
)");
  EXPECT_EQ(generated(f, Target::Cuda).entry, "vf_pointwise_copy");
}

TEST(KernelName, ManyOps_FirstSixDistinct) {
  const Fusion f = read_trace(R"(
def chain(x, y):
  # x: "cuda:0 f32[8]"
  # y: "cuda:0 f32[8]"
  a = prims.add(x, y)
  b = prims.mul(a, y)
  c = prims.add(b, x)
  d = prims.sub(c, y)
  e = prims.exp(d)
  f = prims.tanh(e)
  g = prims.neg(f)
  h = prims.abs(g)
  return h
)");
  EXPECT_EQ(generated(f, Target::Cpu).entry, "vf_pointwise_add_mul_sub_exp_tanh_neg");
}

TEST(KernelName, Explain_PrintsTheEntryOfEachKernel) {
  const Fusion f = read_trace_file((std::filesystem::path(VF_SOURCE_DIR) / "examples/layer_norm.py").string());
  const Plan plan = plan_fusion(f, contiguous_input_layouts(f), {});
  const nlohmann::json j = explain_json(f, plan);
  const std::string text = explain_text(f, plan);
  int kernels = 0;
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    const Segment& s = plan.segments[i];
    if (s.kind != SegmentKind::Kernel) continue;
    ++kernels;
    const std::string entry = generate_kernel(s.spec, *s.kernel, Target::Cuda).entry;
    EXPECT_EQ(j["segments"][i]["kernel_name"], entry);
    EXPECT_NE(text.find("kernel " + entry + "\n"), std::string::npos) << text;
  }
  EXPECT_GT(kernels, 0);
}

}  // namespace
}  // namespace vf
