// Golden plans: each trace in tests/segment/golden/ and examples/ against its expected explain
// text, with bookend off (NAME.plan) and on (NAME.bookend.plan). VF_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/trace_reader.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> golden_traces() {
  std::vector<fs::path> traces;
  for (const char* dir : {"tests/segment/golden", "examples"})
    for (const auto& e : fs::directory_iterator(fs::path(VF_SOURCE_DIR) / dir))
      if (e.path().extension() == ".py") traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  return traces;
}

TEST(GoldenPlan, EveryTrace_MatchesExpectedText) {
  const bool update = std::getenv("VF_UPDATE_GOLDEN") != nullptr;
  const fs::path expected_dir = fs::path(VF_SOURCE_DIR) / "tests/segment/golden/expected";
  fs::create_directories(expected_dir);
  int checked = 0;
  for (const fs::path& trace : golden_traces()) {
    Fusion fusion = read_trace_file(trace.string());
    for (bool bookend : {false, true}) {
      PlanOptions options;
      options.bookend = bookend;
      std::string text = explain_text(fusion, plan_fusion(fusion, contiguous_input_layouts(fusion), options));
      fs::path expected = expected_dir / (trace.stem().string() + (bookend ? ".bookend.plan" : ".plan"));
      if (update) {
        std::ofstream(expected) << text;
        continue;
      }
      ASSERT_TRUE(fs::exists(expected)) << "missing golden plan " << expected << " (run with VF_UPDATE_GOLDEN=1)";
      EXPECT_EQ(text, read_file(expected)) << "plan of " << trace << (bookend ? " with bookend" : "")
                                           << " changed; if intended, rerun with VF_UPDATE_GOLDEN=1";
      ++checked;
    }
  }
  if (!update) {
    EXPECT_GE(checked, 2 * 12);
  }
}

}  // namespace
}  // namespace vf
