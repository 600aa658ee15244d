// Plans of specific programs: the facts the golden texts show, asserted one by one, and the
// executor's measured allocations against the plan for every example.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "codegen/generate_kernel.h"
#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

nlohmann::json plan_json(const std::string& relative_path, bool bookend) {
  Fusion f = read_trace_file((fs::path(VF_SOURCE_DIR) / relative_path).string());
  PlanOptions options;
  options.bookend = bookend;
  return explain_json(f, plan_fusion(f, contiguous_input_layouts(f), options));
}

TEST(Plan, SeedPermuteReshape_OneCopyKernel) {
  nlohmann::json j = plan_json("examples/seed_permute_reshape.py", false);
  EXPECT_EQ(j["kernels"], 1);
  EXPECT_EQ(j["allocated_bytes"], 16384);
  EXPECT_EQ(j["view_ops"][0]["decision"], "index");
  EXPECT_EQ(j["view_ops"][1]["decision"], "copy");
  EXPECT_NE(j["view_ops"][1]["reason"].get<std::string>().find("stride 128"), std::string::npos);
}

TEST(Plan, PureViewChain_AliasesInputWithNoKernel) {
  nlohmann::json j = plan_json("tests/segment/golden/pure_view_chain.py", false);
  EXPECT_EQ(j["kernels"], 0);
  EXPECT_EQ(j["allocated_bytes"], 0);
  EXPECT_EQ(j["outputs"][0]["alias_of"], "x");
  EXPECT_EQ(j["outputs"][0]["strides"], nlohmann::json({0, 2, 48}));
  for (const auto& v : j["view_ops"]) EXPECT_EQ(v["decision"], "alias");
}

TEST(Plan, ComputeThenMergeHeads_OneKernelVersusTwoWithBookend) {
  nlohmann::json off = plan_json("tests/segment/golden/compute_then_merge_heads.py", false);
  nlohmann::json on = plan_json("tests/segment/golden/compute_then_merge_heads.py", true);
  EXPECT_EQ(off["kernels"], 1);
  EXPECT_EQ(off["allocated_bytes"], 4096);
  EXPECT_EQ(on["kernels"], 2);
  EXPECT_EQ(on["allocated_bytes"], 8192);
  EXPECT_EQ(on["view_ops"][1]["decision"], "copy");
}

TEST(Plan, TwoOutputsRelatedByViews_ShareOneBuffer) {
  nlohmann::json j = plan_json("tests/segment/golden/two_outputs_one_buffer.py", false);
  EXPECT_EQ(j["kernels"], 1);
  EXPECT_EQ(j["allocated_bytes"], 4096);
  EXPECT_EQ(j["outputs"][0]["alias_of"], "z");
  EXPECT_EQ(j["outputs"][0]["strides"], nlohmann::json({512, 16, 64, 1}));
  EXPECT_TRUE(j["outputs"][1]["alias_of"].is_null());
  EXPECT_EQ(plan_json("tests/segment/golden/two_outputs_one_buffer.py", true)["allocated_bytes"], 8192);
}

TEST(Plan, CatWithEmptyInputs_EmptyOutputGetsNoKernel) {
  nlohmann::json j = plan_json("examples/falcon_cat_empty.py", false);
  EXPECT_EQ(j["kernels"], 1);
  EXPECT_EQ(j["allocated_bytes"], 2 * 4 * 8 * 4);
  EXPECT_EQ(j["segments"][1]["kind"], "alias");
}

TEST(Plan, NonContiguousInput_OutputTakesItsMemoryOrder) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {4, 6});
  f.add_output(f.add(OpKind::Exp, {x}));
  Layout column_major{{4, 6}, {1, 4}, 0};
  Plan plan = plan_fusion(f, {column_major}, PlanOptions{});
  EXPECT_EQ(plan.outputs[0].layout.strides, (std::vector<int64_t>{1, 4}));
}

// A transpose of a computed value is written in the value's memory order (eager's), so that its
// transpose back is a view (Llama's q and k, returned as transposes of [B, S, H, D] values).
TEST(Plan, TransposeOfComputedValue_WrittenInTheValuesOrder) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 8, 4, 16});
  Value* t = f.add(OpKind::Transpose, {f.add(OpKind::Exp, {x})}, PermuteAttrs{{0, 2, 1, 3}});
  f.add_output(t);
  Plan plan = plan_fusion(f, contiguous_input_layouts(f), PlanOptions{});
  EXPECT_EQ(plan.kernel_count(), 1);
  EXPECT_EQ(plan.outputs[0].layout.strides, (std::vector<int64_t>{512, 16, 64, 1}));
}

// Where the views do not leave a dense layout (a slice of the computed value), the value is
// written densely in its own order.
TEST(Plan, SliceOfComputedValue_WrittenDense) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {8, 6});
  Value* t = f.add(OpKind::Transpose, {f.add(OpKind::Exp, {x})}, PermuteAttrs{{1, 0}});
  f.add_output(f.add(OpKind::SlicePrim, {t}, SliceAttrs{{0, 0}, {3, 8}, {1, 1}}));
  Plan plan = plan_fusion(f, contiguous_input_layouts(f), PlanOptions{});
  EXPECT_EQ(plan.outputs[0].layout.strides, (std::vector<int64_t>{8, 1}));
}

TEST(Plan, ReshapeOfExpandedInput_AliasesWhenStrideZeroDimsSplit) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {6, 4});
  f.add_output(f.add(OpKind::Reshape, {x}, ReshapeAttrs{{2, 3, 4}}));
  Layout expanded{{6, 4}, {0, 1}, 0};
  Plan plan = plan_fusion(f, {expanded}, PlanOptions{});
  EXPECT_EQ(plan.kernel_count(), 0);
  EXPECT_EQ(plan.outputs[0].alias_of, x);
  EXPECT_EQ(plan.outputs[0].layout.strides, (std::vector<int64_t>{0, 0, 1}));
}

// Planning lowers each kernel segment once and keeps the IR on the Segment: generating from it
// gives the kernel that lowering the segment's spec again gives, and split segments carry their own.
TEST(Plan, KernelSegments_KeepTheirLoweredIr) {
  int kernels = 0;
  for (const char* dir : {"examples", "tests/segment/golden"}) {
    for (const auto& e : fs::directory_iterator(fs::path(VF_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".py") continue;
      const Fusion f = read_trace_file(e.path().string());
      for (bool bookend : {false, true}) {
        const Plan plan = plan_fusion(f, contiguous_input_layouts(f), PlanOptions{.bookend = bookend});
        for (const Segment& s : plan.segments) {
          if (s.kind != SegmentKind::Kernel) {
            EXPECT_EQ(s.kernel, nullptr);
            continue;
          }
          ASSERT_NE(s.kernel, nullptr) << e.path();
          for (Target t : {Target::Cpu, Target::Cuda})
            EXPECT_EQ(generate_kernel(s.spec, *s.kernel, t).source, generate_kernel(s.spec, t).source) << e.path();
          ++kernels;
        }
      }
    }
  }
  EXPECT_GE(kernels, 20);
}

// The executor's real allocations agree with the plan, and its results with the reference. Kernel
// segments run on the CPU backend; host segments (reductions, for now) allocate the reference's
// temporaries too, so the process-wide count is compared only for plans without them.
TEST(PlanMeasurement, EveryExample_AllocationsMatchPlanWithAndWithoutBookend) {
  auto backend = std::make_shared<CpuBackend>();
  int checked = 0;
  for (const char* dir : {"examples", "tests/segment/golden"}) {
    for (const auto& e : fs::directory_iterator(fs::path(VF_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".py") continue;
      auto fusion = std::make_shared<Fusion>(read_trace_file(e.path().string()));
      std::vector<HostArg> host_args = random_inputs(*fusion, 7);
      std::vector<Arg> args;
      for (const HostArg& a : host_args)
        args.push_back(std::holds_alternative<HostTensor>(a) ? Arg(to_tensor(std::get<HostTensor>(a)))
                                                             : Arg(std::get<Scalar>(a)));
      std::vector<HostTensor> expected = run_reference(*fusion, host_args);
      for (bool bookend : {false, true}) {
        SCOPED_TRACE(e.path().string() + (bookend ? " with bookend" : ""));
        CompiledFusion compiled(fusion, ExecutorOptions{.device = Device::Cpu, .plan = {.bookend = bookend}}, backend);
        const Plan& plan = compiled.plan_for(args);
        const bool host_segments = std::any_of(plan.segments.begin(), plan.segments.end(),
                                               [](const Segment& s) { return s.kind == SegmentKind::Host; });
        const int64_t before = host_storage_allocated_bytes();
        ExecutionStats stats;
        std::vector<Tensor> outs = compiled.run(args, &stats);
        if (!host_segments) {
          EXPECT_EQ(host_storage_allocated_bytes() - before, plan.allocated_bytes);
        }
        EXPECT_EQ(stats.allocated_bytes, plan.allocated_bytes);
        EXPECT_EQ(stats.peak_bytes, plan.peak_bytes);
        EXPECT_EQ(stats.kernels_launched, plan.kernel_count());
        for (size_t i = 0; i < outs.size(); ++i) {
          Comparison c = compare_tensors(as_host_tensor(outs[i]), expected[i], default_tolerance(outs[i].dtype));
          EXPECT_TRUE(c.ok) << "output " << i << ": " << c.first_mismatch;
          const Value* alias_of = plan.outputs[i].alias_of;
          if (alias_of && fusion->is_input(alias_of)) {
            size_t k = std::find(fusion->inputs().begin(), fusion->inputs().end(), alias_of) - fusion->inputs().begin();
            EXPECT_EQ(outs[i].owner, std::get<Tensor>(args[k]).owner) << "alias must share the input's storage";
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 24);
}

}  // namespace
}  // namespace vf
