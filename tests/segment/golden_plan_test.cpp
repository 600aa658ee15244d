// Golden plans: each trace in tests/segment/golden/ and examples/ against its expected explain
// text, with bookend off (NAME.plan) and on (NAME.bookend.plan). VF_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include "frontend/trace_reader.h"
#include "golden_support.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

TEST(GoldenPlan, EveryTrace_MatchesExpectedText) {
  const fs::path expected_dir = fs::path(VF_SOURCE_DIR) / "tests/segment/golden/expected";
  int checked = 0;
  for (const fs::path& trace : test::golden_traces()) {
    Fusion fusion = read_trace_file(trace.string());
    for (bool bookend : {false, true}) {
      PlanOptions options;
      options.bookend = bookend;
      const std::string text = explain_text(fusion, plan_fusion(fusion, contiguous_input_layouts(fusion), options));
      const fs::path expected = expected_dir / (trace.stem().string() + (bookend ? ".bookend.plan" : ".plan"));
      checked += test::check_golden(expected, text, "plan of " + trace.string() + (bookend ? " with bookend" : ""));
    }
  }
  if (!test::updating_golden()) {
    EXPECT_GE(checked, 2 * 12);
  }
}

}  // namespace
}  // namespace vf
