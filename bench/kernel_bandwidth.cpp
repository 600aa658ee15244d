// Bandwidth of generated CUDA pointwise kernels against a device-to-device copy in the same run.
//
//   vf_bench_kernel_bandwidth [--runs N] [--json PATH] [--case NAME] [--trace FILE]...
//
// For each case (the merge-heads producer and consumer, bf16 [16, 32, 2048, 128]; the float32
// transpose + add, [8192, 8192]; a 1 GiB bfloat16 elementwise chain) it first checks the CUDA
// backend against the reference executor at a small size, then plans the large size with
// CompiledFusion, takes its one kernel segment from the CUDA backend and times the kernel alone:
// GPU time between CUDA events, median of N runs, the L2 flushed before each (a 256 MiB buffer is
// written). Bytes are the segment's bytes read plus bytes written; the ceiling is a 1 GiB
// cuMemcpyDtoD timed the same way (2 GiB moved). Exits 1 when a check fails, 2 without a GPU.
// --trace FILE times the one kernel of a trace file instead (any number of them), unchecked: its
// size is the timed size, too large for the reference executor (check it with `viewfuse run
// --check` at a small size).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "codegen/pack_launch.h"
#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cuda_api.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/executor.h"

namespace vf {
namespace {

struct Case {
  std::string name;
  std::function<std::string(bool small)> trace;  // the trace at the timed size or the check size
  bool checked = true;
};

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string merge_heads_producer(bool small) {
  const std::vector<int64_t> x = small ? std::vector<int64_t>{2, 4, 24, 16} : std::vector<int64_t>{16, 32, 2048, 128};
  const std::vector<int64_t> out = {x[0], x[2], x[1] * x[3]};
  const std::vector<int64_t> perm = {x[0], x[2], x[1], x[3]};
  return "def merge_heads_producer(x):\n"
         "  # x: \"cuda:0 bf16" + shape_text(x) + "\"\n"
         "  t0 = prims.mul(x, 0.125)\n"
         "  t1 = prims.add(t0, 1.0)\n"
         "  t2 = prims.transpose(t1, (0, 2, 1, 3))  # t2: \"cuda:0 bf16" + shape_text(perm) + "\"\n"
         "  t3 = prims.reshape(t2, (" + std::to_string(out[0]) + ", " + std::to_string(out[1]) + ", " +
         std::to_string(out[2]) + "))\n"
         "  return t3\n";
}

std::string merge_heads_consumer(bool small) {
  const std::vector<int64_t> x = small ? std::vector<int64_t>{2, 4, 24, 16} : std::vector<int64_t>{16, 32, 2048, 128};
  const std::string out = "(" + std::to_string(x[0]) + ", " + std::to_string(x[2]) + ", " + std::to_string(x[1] * x[3]) + ")";
  // gelu, tanh form, computed in float32: 0.5 * a * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 * a^3))).
  return "def merge_heads_consumer(x):\n"
         "  # x: \"cuda:0 bf16" + shape_text(x) + "\"\n"
         "  t0 = prims.transpose(x, (0, 2, 1, 3))\n"
         "  t1 = prims.reshape(t0, " + out + ")\n"
         "  t2 = prims.convert_element_type(t1, dtypes.float32)\n"
         "  t3 = prims.mul(t2, t2)\n"
         "  t4 = prims.mul(t3, t2)\n"
         "  t5 = prims.mul(0.044715, t4)\n"
         "  t6 = prims.add(t2, t5)\n"
         "  t7 = prims.mul(0.7978845608028654, t6)\n"
         "  t8 = prims.tanh(t7)\n"
         "  t9 = prims.add(1.0, t8)\n"
         "  t10 = prims.mul(0.5, t2)\n"
         "  t11 = prims.mul(t10, t9)\n"
         "  t12 = prims.convert_element_type(t11, dtypes.bfloat16)\n"
         "  return t12\n";
}

std::string transpose_add(bool small) {
  const std::string s = small ? "[72, 136]" : "[8192, 8192]";
  const std::string t = small ? "[136, 72]" : "[8192, 8192]";
  return "def transpose_add(a, b):\n"
         "  # a: \"cuda:0 f32" + t + "\"\n"
         "  # b: \"cuda:0 f32" + s + "\"\n"
         "  t0 = prims.transpose(a, (1, 0))\n"
         "  t1 = prims.add(t0, b)\n"
         "  return t1\n";
}

std::string elementwise_chain(bool small) {
  const std::string n = small ? "[100003]" : "[536870912]";  // 1 GiB of bfloat16
  return "def elementwise_chain(x):\n"
         "  # x: \"cuda:0 bf16" + n + "\"\n"
         "  t0 = prims.mul(x, 2.0)\n"
         "  t1 = prims.add(t0, 1.0)\n"
         "  t2 = prims.mul(t1, x)\n"
         "  t3 = prims.sub(t2, 3.0)\n"
         "  return t3\n";
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {{"merge_heads_producer", merge_heads_producer},
                                        {"merge_heads_consumer", merge_heads_consumer},
                                        {"transpose_add_f32", transpose_add},
                                        {"elementwise_chain_bf16_1GiB", elementwise_chain}};
  return all;
}

// GPU time of `work` in milliseconds, median over `runs`, the L2 flushed before each run.
class Timer {
 public:
  Timer() : api_(cuda_driver_api()), flush_(int64_t{256} << 20) {
    cuda_check(api_.cuEventCreate(&start_, 0), "cuEventCreate");
    cuda_check(api_.cuEventCreate(&stop_, 0), "cuEventCreate");
  }
  ~Timer() {
    api_.cuEventDestroy(start_);
    api_.cuEventDestroy(stop_);
  }
  std::vector<double> time(const std::function<void()>& work, int runs) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      cuda_check(api_.cuMemsetD8(reinterpret_cast<CUdeviceptr>(flush_.data()), static_cast<unsigned char>(r), flush_.bytes()),
                 "cuMemsetD8");
      cuda_check(api_.cuEventRecord(start_, nullptr), "cuEventRecord");
      work();
      cuda_check(api_.cuEventRecord(stop_, nullptr), "cuEventRecord");
      cuda_check(api_.cuEventSynchronize(stop_), "cuEventSynchronize");
      float t = 0;
      cuda_check(api_.cuEventElapsedTime(&t, start_, stop_), "cuEventElapsedTime");
      ms.push_back(t);
    }
    return ms;
  }

 private:
  const CudaDriverApi& api_;
  DeviceBuffer flush_;
  CUevent start_ = nullptr, stop_ = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::vector<Arg> upload(const std::vector<HostArg>& host) {
  std::vector<Arg> out;
  for (const HostArg& a : host) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      out.push_back(copy_to(to_tensor(*t), Device::Cuda));
    else
      out.push_back(std::get<Scalar>(a));
  }
  return out;
}

// The CUDA backend's outputs against the reference executor's at the check size.
bool check(const Case& c, const std::shared_ptr<Backend>& backend, std::string& detail) {
  auto fusion = std::make_shared<const Fusion>(read_trace(c.trace(true), c.name));
  const std::vector<HostArg> host = random_inputs(*fusion, 7);
  CompiledFusion reference(fusion, ExecutorOptions{.device = Device::Cpu}, nullptr);
  std::vector<Arg> host_args;
  for (const HostArg& a : host) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      host_args.push_back(to_tensor(*t));
    else
      host_args.push_back(std::get<Scalar>(a));
  }
  const std::vector<Tensor> expected = reference.run(host_args);
  CompiledFusion gpu(fusion, ExecutorOptions{.device = Device::Cuda}, backend);
  const std::vector<Tensor> actual = gpu.run(upload(host));
  for (size_t o = 0; o < expected.size(); ++o) {
    const HostTensor e = host_copy(expected[o]);
    const Comparison cmp = compare_tensors(host_copy(actual[o]), e, default_tolerance(e.dtype()));
    if (!cmp.ok) {
      detail = "output " + std::to_string(o) + ": " + cmp.first_mismatch;
      return false;
    }
  }
  return true;
}

int run(int argc, char** argv) {
  int runs = 25;
  std::string json_path, only;
  std::vector<Case> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--case" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--trace" && i + 1 < argc) {
      const std::filesystem::path path = argv[++i];
      std::ifstream in(path);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in) {
        std::fprintf(stderr, "kernel_bandwidth: cannot read %s\n", path.c_str());
        return 2;
      }
      files.push_back({path.stem().string(), [text](bool) { return text; }, false});
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--json PATH] [--case NAME] [--trace FILE]...\n", argv[0]);
      return 2;
    }
  }
  if (!cuda_available() || !nvrtc_available()) {
    std::fprintf(stderr, "kernel_bandwidth: needs a CUDA device and NVRTC\n");
    return 2;
  }
  const CudaDevice& device = cuda_device(0);
  auto backend = std::make_shared<CudaBackend>(0, std::filesystem::path());  // no disk cache: compile here
  const CudaDriverApi& api = cuda_driver_api();
  Timer timer;
  nlohmann::json report;
  report["gpu"] = device.name;
  report["runs"] = runs;

  // The copy ceiling.
  const int64_t copy_bytes = int64_t{1} << 30;
  double ceiling = 0;
  {
    DeviceBuffer src(copy_bytes), dst(copy_bytes);
    cuda_memset(src.data(), 1, copy_bytes);
    auto copy = [&] {
      cuda_check(api.cuMemcpyDtoD(reinterpret_cast<CUdeviceptr>(dst.data()), reinterpret_cast<CUdeviceptr>(src.data()),
                                  static_cast<size_t>(copy_bytes)),
                 "cuMemcpyDtoD");
    };
    timer.time(copy, 3);
    const double ms = median(timer.time(copy, runs));
    ceiling = 2.0 * copy_bytes / (ms * 1e-3) / 1e9;
    std::printf("copy 1 GiB D2D: %.1f us, %.0f GB/s (read + write)\n", ms * 1e3, ceiling);
    report["copy"] = {{"bytes_moved", 2 * copy_bytes}, {"us", ms * 1e3}, {"gbps", ceiling}};
  }

  bool all_ok = true;
  std::printf("%-30s %8s %10s %9s %8s %7s %s\n", "case", "check", "MB moved", "us", "GB/s", "% copy", "grid x block");
  for (const Case& c : files.empty() ? cases() : files) {
    if (!only.empty() && c.name != only) continue;
    nlohmann::json row;
    row["case"] = c.name;
    std::string detail;
    bool ok = !c.checked;
    try {
      if (c.checked) ok = check(c, backend, detail);
    } catch (const std::exception& e) {
      detail = e.what();
    }
    row["check"] = !c.checked ? "unchecked" : ok ? "ok" : "FAILED: " + detail;
    if (!ok) {
      all_ok = false;
      std::printf("%-30s FAILED: %s\n", c.name.c_str(), detail.c_str());
      report["cases"].push_back(row);
      continue;
    }
    auto fusion = std::make_shared<const Fusion>(read_trace(c.trace(false), c.name));
    const std::vector<Arg> args = upload(random_inputs(*fusion, 11));
    CompiledFusion compiled(fusion, ExecutorOptions{.device = Device::Cuda}, backend);
    const Plan& plan = compiled.plan_for(args);
    const Segment* kernel = nullptr;
    int kernels = 0;
    for (const Segment& s : plan.segments)
      if (s.kind == SegmentKind::Kernel) {
        kernel = &s;
        ++kernels;
      }
    if (kernels != 1) {
      std::printf("%-30s has %d kernel segments; expected 1\n", c.name.c_str(), kernels);
      all_ok = false;
      continue;
    }
    // The segment's inputs are fusion inputs here (one kernel, no alias segment before it).
    std::vector<KernelBuffer> in_bufs, out_bufs;
    std::vector<Scalar> scalars(kernel->spec.input_layouts.size());
    for (size_t i = 0; i < kernel->inputs.size(); ++i) {
      const auto& inputs = fusion->inputs();
      const size_t at = static_cast<size_t>(std::find(inputs.begin(), inputs.end(), kernel->inputs[i]) - inputs.begin());
      VF_INTERNAL_CHECK(at < inputs.size(), "kernel input ", i, " of ", c.name, " is not a fusion input");
      if (const Tensor* t = std::get_if<Tensor>(&args[at]))
        in_bufs.push_back({t->data, &kernel->spec.input_layouts[i]});
      else {
        in_bufs.push_back({nullptr, nullptr});
        scalars[i] = std::get<Scalar>(args[at]);
      }
    }
    std::vector<DeviceBuffer> outs;
    for (size_t o = 0; o < kernel->spec.output_layouts.size(); ++o) {
      const Layout& l = kernel->spec.output_layouts[o];
      outs.emplace_back(std::max<int64_t>(l.storage_extent(), 1) * dtype_size(kernel->fusion->outputs()[o]->dtype));
      out_bufs.push_back({outs.back().data(), &l});
    }
    std::shared_ptr<const PreparedKernel> prepared = backend->prepare(kernel->spec);
    auto launch = [&] { prepared->launch(KernelArgs{in_bufs, scalars, out_bufs, nullptr}); };
    timer.time(launch, 3);
    const double ms = median(timer.time(launch, runs));
    const int64_t bytes = kernel->bytes_read + kernel->bytes_written;
    const double gbps = bytes / (ms * 1e-3) / 1e9;
    LaunchBlock block;
    pack_launch(generate_kernel(kernel->spec, Target::Cuda), KernelArgs{in_bufs, scalars, out_bufs, nullptr},
                device.sm_count, block);
    std::printf("%-30s %8s %10.1f %9.1f %8.0f %6.1f%% %u x %u\n", c.name.c_str(), c.checked ? "ok" : "-", bytes / 1e6, ms * 1e3, gbps,
                100 * gbps / ceiling, block.grid, block.block);
    row["bytes_moved"] = bytes;
    row["us"] = ms * 1e3;
    row["gbps"] = gbps;
    row["percent_of_copy"] = 100 * gbps / ceiling;
    row["grid"] = block.grid;
    row["block"] = block.block;
    report["cases"].push_back(row);
  }
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace vf

int main(int argc, char** argv) {
  try {
    return vf::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_bandwidth: %s\n", e.what());
    return 1;
  }
}
