// First-call latency: NVRTC start-up on its own, a cold compile of typical kernels once NVRTC is
// loaded, and the first run of fusions whose kernels are already in the disk cache.
//
//   vf_bench_first_call [--repeat N] [--json PATH]
//
// Without NVRTC everything is skipped; without a GPU only the compiles run (for sm_90).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/generate_kernel.h"
#include "frontend/trace_reader.h"
#include "runtime/cuda_api.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/executor.h"
#include "runtime/nvrtc_compiler.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double time_ms(const std::function<void()>& fn) {
  const auto start = Clock::now();
  fn();
  return ms_since(start);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Typical fusions: a 3-op pointwise chain and the merge-heads producer of REFERENCE.md section 5
// (bf16, a permute and a reshape inside), both at small sizes (the source does not depend on them).
constexpr const char* kPointwise = R"(def pointwise(a, b, c):
  # a: "cuda:0 f32[1024]"
  # b: "cuda:0 f32[1024]"
  # c: "cuda:0 f32[1024]"
  t0 = prims.add(a, b)  # t0: "cuda:0 f32[1024]"
  t1 = prims.mul(t0, c)  # t1: "cuda:0 f32[1024]"
  t2 = prims.sub(t1, a)  # t2: "cuda:0 f32[1024]"
  return t2
)";

constexpr const char* kMergeHeads = R"(def merge_heads(x):
  # x: "cuda:0 bf16[2, 4, 64, 32]"
  t0 = prims.convert_element_type(x, dtypes.float32)  # t0: "cuda:0 f32[2, 4, 64, 32]"
  t1 = prims.mul(t0, 0.125)  # t1: "cuda:0 f32[2, 4, 64, 32]"
  t2 = prims.add(t1, 1.0)  # t2: "cuda:0 f32[2, 4, 64, 32]"
  t3 = prims.convert_element_type(t2, dtypes.bfloat16)  # t3: "cuda:0 bf16[2, 4, 64, 32]"
  t4 = prims.transpose(t3, (0, 2, 1, 3))  # t4: "cuda:0 bf16[2, 64, 4, 32]"
  t5 = prims.reshape(t4, (2, 64, 128))  # t5: "cuda:0 bf16[2, 64, 128]"
  return t5
)";

struct Typical {
  const char* name;
  std::string trace;
};

std::vector<Typical> typical_fusions() {
  std::vector<Typical> out = {{"pointwise3_f32", kPointwise}, {"merge_heads_producer_bf16", kMergeHeads}};
  const char* root = std::getenv("VF_SOURCE_DIR");
  const std::filesystem::path rope = std::filesystem::path(root ? root : VF_SOURCE_DIR) / "examples/llama_rope.py";
  std::ifstream in(rope);
  if (in) out.push_back({"llama_rope_example", std::string(std::istreambuf_iterator<char>(in), {})});
  return out;
}

std::vector<Arg> device_inputs(const Fusion& fusion) {
  std::vector<Arg> args;
  for (const Value* in : fusion.inputs()) {
    if (!in->is_tensor) {
      args.emplace_back(Scalar::from_float(1.0));
      continue;
    }
    const Layout l = Layout::contiguous(in->shape);
    const int64_t bytes = l.storage_extent() * dtype_size(in->dtype);
    Tensor t = allocate_tensor(Device::Cuda, in->dtype, l, bytes);
    cuda_memset(t.data, 0, bytes);
    args.emplace_back(std::move(t));
  }
  return args;
}

struct Report {
  nlohmann::json json = nlohmann::json::object();
  void line(const std::string& key, double ms, const std::string& what) {
    json[key] = ms;
    std::printf("  %-48s %10.3f ms   %s\n", key.c_str(), ms, what.c_str());
  }
};

int run(int repeat, const std::string& json_path) {
  Report report;
  std::printf("first-call latency (median of %d where repeated)\n", repeat);
  const auto load_start = Clock::now();
  if (!nvrtc_available()) {
    std::printf("skipped: NVRTC not found (searched %s)\n", nvrtc_search_list().c_str());
    return 0;
  }
  report.line("nvrtc_load_ms", ms_since(load_start), "dlopen of NVRTC and its symbols");
  report.json["nvrtc_version"] = nvrtc_version_string();
  bool gpu = false;
  const double init = time_ms([&] { gpu = cuda_available(); });
  int cc_major = 9, cc_minor = 0;
  if (gpu) {
    report.line("cuda_init_ms", init, "driver load, cuInit, primary context (once per process)");
    cc_major = cuda_device(0).cc_major;
    cc_minor = cuda_device(0).cc_minor;
    report.json["gpu"] = cuda_device(0).name;
  } else {
    std::printf("  (no CUDA device: compiles only, for sm_90; disk-cache runs skipped)\n");
  }
  report.json["arch"] = "sm_" + std::to_string(cc_major * 10 + cc_minor);

  // NVRTC start-up: its first compile (of an empty kernel) pays for initialising the compiler.
  const char* empty = "extern \"C\" __global__ void vf_empty() {}\n";
  report.line("nvrtc_first_compile_empty_ms",
              time_ms([&] { nvrtc_compile(empty, "vf_empty.cu", cc_major, cc_minor); }),
              "NVRTC start-up: first compile in the process, empty kernel");
  std::vector<double> again;
  for (int i = 0; i < repeat; ++i)
    again.push_back(time_ms([&] { nvrtc_compile(empty, "vf_empty.cu", cc_major, cc_minor); }));
  report.line("nvrtc_compile_empty_ms", median(again), "an empty kernel once NVRTC is loaded");

  for (const Typical& t : typical_fusions()) {
    Fusion fusion = read_trace(t.trace, t.name);
    Plan plan = plan_fusion(fusion, contiguous_input_layouts(fusion), {});
    std::vector<double> gen, compile;
    size_t kernels = 0;
    for (int i = 0; i < repeat; ++i) {
      for (const Segment& seg : plan.segments) {
        if (seg.kind != SegmentKind::Kernel) continue;
        if (i == 0) ++kernels;
        GeneratedKernel k;
        gen.push_back(time_ms([&] { k = generate_kernel(seg.spec, Target::Cuda); }));
        compile.push_back(time_ms([&] { nvrtc_compile(k.source, k.entry, cc_major, cc_minor); }));
      }
    }
    if (kernels == 0) continue;
    report.line(std::string("codegen_ms/") + t.name, median(gen), "lower + emit CUDA C++, per kernel");
    report.line(std::string("nvrtc_cold_compile_ms/") + t.name, median(compile),
                "NVRTC compile to CUBIN, per kernel (" + std::to_string(kernels) + " kernel(s))");
  }

  if (gpu) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "vf_bench_first_call_cache";
    std::filesystem::remove_all(dir, ec);
    for (const Typical& t : typical_fusions()) {
      auto fusion = std::make_shared<Fusion>(read_trace(t.trace, t.name));
      std::vector<Arg> args = device_inputs(*fusion);
      ExecutorOptions options;
      options.device = Device::Cuda;
      // Cold: an empty disk cache; a new backend has an empty in-memory cache.
      const double cold = time_ms([&] {
        CompiledFusion compiled(fusion, options, std::make_shared<CudaBackend>(0, dir));
        compiled.run(args);
        cuda_synchronize();
      });
      report.line(std::string("first_run_cold_ms/") + t.name, cold,
                  "plan + codegen + NVRTC + load + run, empty disk cache");
      std::vector<double> hit, plan_only;
      int64_t compiles = 0;
      for (int i = 0; i < repeat; ++i) {
        auto backend = std::make_shared<CudaBackend>(0, dir);
        CompiledFusion compiled(fusion, options, backend);
        hit.push_back(time_ms([&] {
          compiled.run(args);
          cuda_synchronize();
        }));
        compiles += backend->compile_count();
        CompiledFusion again_planned(fusion, options, backend);  // its kernels are in memory now
        plan_only.push_back(time_ms([&] { again_planned.plan_for(args); }));
      }
      if (compiles != 0) std::printf("  warning: %lld NVRTC compiles where the disk cache should have hit\n",
                                     static_cast<long long>(compiles));
      report.json[std::string("disk_cache_misses/") + t.name] = compiles;
      report.line(std::string("first_run_disk_cache_ms/") + t.name, median(hit),
                  "plan + codegen + disk read + module load + run (target <= 5 ms)");
      report.line(std::string("first_run_memory_cache_ms/") + t.name, median(plan_only),
                  "plan + codegen (no run), kernels already loaded");
    }
    std::filesystem::remove_all(dir, ec);
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << report.json.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace vf

int main(int argc, char** argv) {
  int repeat = 5;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--repeat N] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  try {
    return vf::run(repeat, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
