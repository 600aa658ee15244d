// Golden texts: the traces they are made from, and the comparison of a text with its expected file
// (VF_UPDATE_GOLDEN=1 rewrites the files instead).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vf::test {

inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every trace of tests/segment/golden/ and examples/, sorted.
inline std::vector<std::filesystem::path> golden_traces() {
  std::vector<std::filesystem::path> traces;
  for (const char* dir : {"tests/segment/golden", "examples"})
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(VF_SOURCE_DIR) / dir))
      if (e.path().extension() == ".py") traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  return traces;
}

inline bool updating_golden() { return std::getenv("VF_UPDATE_GOLDEN") != nullptr; }

// Compares `text` with the file `expected` (what of: `what`), or writes it there when updating.
// Returns whether it compared.
inline bool check_golden(const std::filesystem::path& expected, const std::string& text, const std::string& what) {
  if (updating_golden()) {
    std::filesystem::create_directories(expected.parent_path());
    std::ofstream(expected) << text;
    return false;
  }
  EXPECT_TRUE(std::filesystem::exists(expected)) << "missing golden file " << expected << " (run with VF_UPDATE_GOLDEN=1)";
  EXPECT_EQ(text, read_text_file(expected)) << what << " changed; if intended, rerun with VF_UPDATE_GOLDEN=1";
  return true;
}

}  // namespace vf::test
