// Golden kernel IR: each trace in tests/segment/golden/ and examples/ planned for contiguous inputs,
// every kernel segment's IR (after the shared rewrites) with its CUDA and CPU schedules (print_kernel_ir.h) against
// tests/codegen/golden/NAME.kir, so that a schedule can be reviewed without reading C or CUDA.
// VF_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include "codegen/generate_kernel.h"
#include "codegen/print_kernel_ir.h"
#include "frontend/trace_reader.h"
#include "golden_support.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

TEST(GoldenKernelIr, EveryTrace_MatchesExpectedListing) {
  int checked = 0, kernels = 0;
  for (const fs::path& trace : test::golden_traces()) {
    const Fusion fusion = read_trace_file(trace.string());
    const Plan plan = plan_fusion(fusion, contiguous_input_layouts(fusion), PlanOptions{});
    std::string text;
    for (size_t i = 0; i < plan.segments.size(); ++i) {
      const Segment& s = plan.segments[i];
      if (s.kind != SegmentKind::Kernel) continue;
      const KernelIR ir = rewrite_kernel_ir(*s.kernel);
      text += "==== segment #" + std::to_string(i) + "\n" + print_kernel_ir(ir);
      for (Target t : {Target::Cuda, Target::Cpu}) text += print_schedule(ir, schedule_kernel(s.spec, ir, t));
      ++kernels;
    }
    const fs::path expected = fs::path(VF_SOURCE_DIR) / "tests/codegen/golden" / (trace.stem().string() + ".kir");
    checked += test::check_golden(expected, text, "kernel IR of " + trace.string());
  }
  if (!test::updating_golden()) {
    EXPECT_GE(checked, 12);
    EXPECT_GE(kernels, 12);
  }
}

}  // namespace
}  // namespace vf
