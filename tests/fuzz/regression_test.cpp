// Shrunk random fusions that once failed, kept as repro files (tests/fuzz/regressions/*.py): each
// is read back with its input layouts and checked against the reference, bookend off and on; the
// CUDA source of each of its kernels must compile with NVRTC (where NVRTC can be loaded).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "frontend/trace_reader.h"
#include "fuzz_check.h"
#include "reference/compare.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_api.h"
#include "runtime/executor.h"
#include "runtime/repro.h"

namespace vf::fuzz {
namespace {

std::vector<std::filesystem::path> regression_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(VF_SOURCE_DIR) + "/tests/fuzz/regressions"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FuzzRegressions, EachMatchesReference) {
  const std::vector<std::filesystem::path> files = regression_files();
  ASSERT_FALSE(files.empty()) << "tests/fuzz/regressions holds no .py files";
  CpuBackendOptions backend_options;
  backend_options.inline_extent = 64;
  backend_options.specialize = SpecializeMode::Off;
  auto generic = std::make_shared<CpuBackend>(backend_options);
  // The same programs with every kernel specialized to its sizes at its first launch.
  backend_options.specialize = SpecializeMode::Now;
  auto specialized = std::make_shared<CpuBackend>(backend_options);
  std::unordered_set<std::string> cuda_sources;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    auto fusion = std::make_shared<Fusion>(read_trace(text, path.string()));
    const std::vector<Layout> layouts = read_repro_layouts(text, *fusion);
    const uint64_t seed = read_repro_seed(text);
    std::vector<HostArg> host_args;
    for (size_t i = 0; i < fusion->inputs().size(); ++i)
      host_args.push_back(input_tensor(fusion->inputs()[i]->dtype, layouts[i], seed, i));
    const std::vector<HostTensor> expected = run_reference(*fusion, host_args);
    for (auto [bookend, backend] : {std::pair{false, generic}, {true, generic}, {false, specialized}}) {
      CompiledFusion compiled(fusion, ExecutorOptions{.device = Device::Cpu, .plan = {.bookend = bookend}}, backend);
      std::vector<Arg> args;
      for (const HostArg& a : host_args) args.push_back(to_tensor(std::get<HostTensor>(a)));
      const std::vector<Tensor> outs = compiled.run(args);
      if (nvrtc_available()) {
        EXPECT_EQ(cuda_compile_problem(compiled.plan_for(args), cuda_sources), "");
      }
      ASSERT_EQ(outs.size(), expected.size());
      for (size_t i = 0; i < outs.size(); ++i) {
        const Comparison c = compare_tensors(host_copy(outs[i]), expected[i],
                                             default_tolerance(fusion->outputs()[i]->dtype));
        EXPECT_TRUE(c.ok) << "bookend " << bookend << (backend == specialized ? ", specialized" : "") << ", output "
                          << i << ": " << c.first_mismatch;
      }
    }
  }
}

}  // namespace
}  // namespace vf::fuzz
