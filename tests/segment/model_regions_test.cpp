// The regions of real training steps (tests/segment/model_regions: nanoGPT's and a Llama's, saved
// by bench/model_steps.py with their input layouts): each plans, every kernel's source generates
// for both targets and compiles with NVRTC for sm_90 where it is there (with the default
// schedules, without those that can be switched off, and with those that must be switched on;
// with the default ones also specialized to the region's sizes), spilling no more than recorded;
// every kernel writes something, every buffer is read by a later segment or returned, and the
// kernel counts, kernel names and bytes match the golden summary, model_regions/expected.txt.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "codegen/generate_kernel.h"
#include "codegen/specialize_kernel.h"
#include "frontend/trace_reader.h"
#include "golden_support.h"
#include "runtime/cuda_api.h"
#include "runtime/nvrtc_compiler.h"
#include "runtime/repro.h"
#include "segment/plan_fusion.h"
#include "test_support.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

std::string mib(int64_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

// Bytes of spill stores that ptxas (NVRTC 13.0, sm_90) reports for the kernels that spill; every
// other kernel spills none. Lower one when a change removes a spill.
const std::map<std::string, int64_t> kSpillAllowance = {
    {"vf_pointwise_mul_sub_add_cat", 380},              // Llama's RoPE: 8 packs a step, 64 registers
    {"vf_pointwise_neg_mul_add_pad", 432},              // its backward
    {"vf_reduction_take_pow_sum_div_add_rsqrt", 16},  // the embedding's gather and the first norm
    {"vf_reduction_add_pow_sum_div_rsqrt_mul", 8},    // Llama's RMS norm: its square a product, 64 registers
};

// The same for the kernels specialized to the region's sizes (specialize_kernel.h) for a GPU of 132
// multiprocessors (an H100 or H200): those are what run in a model's step, after the first calls.
const std::map<std::string, int64_t> kSpecializedSpillAllowance = {
    {"vf_reduction_amax_abs_eq_where_sub_exp", 56},  // nanoGPT's cross-entropy: rows of 50,304 bf16
    {"vf_reduction_iota_eq_neg_div_where_exp", 56},  // in 32 of 64 registers a thread
    // nanoGPT's norm backward under warp rows (128 registers, the row's three groups of four
    // loads): 16 to 36 bytes specialized, none generic; as measured (H100, session 29: the step's
    // 25 launches 31.6 -> 26.6 us with warp rows, spills and all).
    {"vf_column_reduction_mul_sub_sum_pow_neg_div", 36},
};

// Every compile reaches ptxas (test_support.h turn_nvrtc_cache_off): regions share kernels. On the
// H100 (session 29) this test failed, its output not kept, where the other 758 tests passed; the
// cache is the likely cause.
const bool kNvrtcCacheOff = test::turn_nvrtc_cache_off();

int64_t spill_bytes(const GeneratedKernel& k) {
  NvrtcOptions options;
  options.ptxas_report = true;
  CompiledCuda compiled;
  EXPECT_NO_THROW(compiled = nvrtc_compile(k.source, k.entry, 9, 0, options)) << k.source;
  const int64_t bytes = test::ptxas_spill_store_bytes(compiled.log);
  EXPECT_GE(bytes, 0) << "no spill report in NVRTC's log: " << compiled.log;
  return bytes;
}

int64_t allowance(const std::map<std::string, int64_t>& allowances, const std::string& entry) {
  const auto it = allowances.find(entry);
  return it == allowances.end() ? 0 : it->second;
}

TEST(ModelRegions, EveryRegion_PlansWithGoldenKernelsAndBytes) {
  ASSERT_TRUE(kNvrtcCacheOff) << "could not set CUDA_CACHE_DISABLE";
  const fs::path dir = fs::path(VF_SOURCE_DIR) / "tests/segment/model_regions";
  std::vector<fs::path> traces;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".py") traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  ASSERT_GE(traces.size(), 20u);
  std::string summary;
  int kernels = 0;
  for (const fs::path& path : traces) {
    SCOPED_TRACE(path.filename().string());
    const std::string text = test::read_text_file(path);
    const Fusion fusion = read_trace(text, path.filename().string());
    const Plan plan = plan_fusion(fusion, read_repro_layouts(text, fusion), {});
    for (const BufferPlan& b : plan.buffers)  // each read by a later segment, or returned
      EXPECT_GT(b.last_use, b.producer) << b.value->name << ", written by segment #" << b.producer << ", is never read";
    int64_t read = 0, written = 0;
    std::string names;
    for (const Segment& s : plan.segments) {
      if (s.kind != SegmentKind::Kernel) continue;
      EXPECT_FALSE(s.outputs.empty()) << "a kernel that writes nothing: " << s.note;
      read += s.bytes_read;
      written += s.bytes_written;
      const GeneratedKernel cpu = generate_kernel(s.spec, *s.kernel, Target::Cpu);
      const GeneratedKernel cuda = generate_kernel(s.spec, *s.kernel, Target::Cuda);
      EXPECT_EQ(cpu.entry, cuda.entry);
      // The default schedules, and those without the ones that can be switched off
      // (schedule_cuda.h schedule_enabled), compile and spill no more than recorded.
      struct Switches {
        const char* disabled;
        const char* enabled;
      };
      for (const Switches sw : {Switches{"", ""}, Switches{"sliced,preload,prefetch", ""}, Switches{"", "async"}}) {
        if (!test::nvrtc_checks_enabled()) break;
        SCOPED_TRACE(std::string("disabled schedules: ") + sw.disabled + ", enabled: " + sw.enabled);
        const test::ScopedEnv disable("VF_DISABLE_SCHEDULES", sw.disabled);
        const test::ScopedEnv enable("VF_ENABLE_SCHEDULES", sw.enabled);
        const GeneratedKernel k = generate_kernel(s.spec, *s.kernel, Target::Cuda);
        EXPECT_LE(spill_bytes(k), allowance(kSpillAllowance, k.entry)) << k.entry;
        if (*sw.disabled == '\0' && *sw.enabled == '\0') {
          EXPECT_LE(spill_bytes(specialize_for_spec(k, s.spec, 132)), allowance(kSpecializedSpillAllowance, k.entry))
              << k.entry << " specialized";
        }
      }
      names += " " + cuda.entry;
      ++kernels;
    }
    summary += path.filename().string() + ": " + std::to_string(plan.kernel_count()) + " kernel(s), reads " + mib(read) +
               ", writes " + mib(written) + ", allocates " + mib(plan.allocated_bytes) + names + "\n";
  }
  test::check_golden(dir / "expected.txt", summary, "the model regions' plans");
  EXPECT_GE(kernels, 20);
}

}  // namespace
}  // namespace vf
