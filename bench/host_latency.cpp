// Host latency of a cached CompiledFusion::run (lookup, argument packing, launch), beside a bare
// cuLaunchKernel of a trivial 4-argument kernel timed in the same run. Google Benchmark.
//
// CPU-backend variants run anywhere (their time includes the tiny kernel itself); CUDA variants
// need a GPU and are skipped with a message without one. CUDA runs take their output buffers from
// a reusing allocator hook (as PyTorch's caching allocator does for the Python package), so the
// numbers are the executor's own cost; the *_DriverAlloc variant shows cuMemAlloc/cuMemFree.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "codegen/pack_launch.h"
#include "frontend/trace_reader.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_api.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_kernel.h"
#include "runtime/cuda_memory.h"
#include "runtime/executor.h"
#include "runtime/nvrtc_compiler.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

// The cases: a 3-op pointwise fusion (one kernel), a pure-view fusion (no kernel) and a 10-op
// pointwise chain (one kernel), on 1024 floats.
constexpr const char* kPointwise = R"(def pointwise(a, b, c):
  # a: "cuda:0 f32[1024]"
  # b: "cuda:0 f32[1024]"
  # c: "cuda:0 f32[1024]"
  t0 = prims.add(a, b)  # t0: "cuda:0 f32[1024]"
  t1 = prims.mul(t0, c)  # t1: "cuda:0 f32[1024]"
  t2 = prims.sub(t1, a)  # t2: "cuda:0 f32[1024]"
  return t2
)";

constexpr const char* kAliasOnly = R"(def views(x):
  # x: "cuda:0 f32[2, 16, 8, 16]"
  t0 = prims.reshape(x, (2, 16, 128))  # t0: "cuda:0 f32[2, 16, 128]"
  t1 = prims.transpose(t0, (0, 2, 1))  # t1: "cuda:0 f32[2, 128, 16]"
  return t1
)";

constexpr const char* kTenOps = R"(def ten_ops(a, b):
  # a: "cuda:0 f32[1024]"
  # b: "cuda:0 f32[1024]"
  t0 = prims.add(a, b)  # t0: "cuda:0 f32[1024]"
  t1 = prims.mul(t0, a)  # t1: "cuda:0 f32[1024]"
  t2 = prims.sub(t1, b)  # t2: "cuda:0 f32[1024]"
  t3 = prims.exp(t2)  # t3: "cuda:0 f32[1024]"
  t4 = prims.add(t3, 1.0)  # t4: "cuda:0 f32[1024]"
  t5 = prims.log(t4)  # t5: "cuda:0 f32[1024]"
  t6 = prims.mul(t5, 0.5)  # t6: "cuda:0 f32[1024]"
  t7 = prims.tanh(t6)  # t7: "cuda:0 f32[1024]"
  t8 = prims.maximum(t7, a)  # t8: "cuda:0 f32[1024]"
  t9 = prims.neg(t8)  # t9: "cuda:0 f32[1024]"
  return t9
)";

struct Case {
  std::shared_ptr<const Fusion> fusion;
  std::vector<Arg> args;
};

Case make_case(const char* trace, Device device) {
  Case c;
  c.fusion = std::make_shared<Fusion>(read_trace(trace));
  for (const Value* in : c.fusion->inputs()) {
    const Layout l = Layout::contiguous(in->shape);
    const int64_t bytes = l.storage_extent() * dtype_size(in->dtype);
    Tensor t = allocate_tensor(device, in->dtype, l, bytes);
    if (device == Device::Cuda) cuda_memset(t.data, 0, bytes);
    c.args.emplace_back(std::move(t));
  }
  return c;
}

// ---- CPU backend ----

std::shared_ptr<CpuBackend> cpu_backend() {
  static auto backend = std::make_shared<CpuBackend>();
  return backend;
}

void run_cpu(benchmark::State& state, const char* trace) {
  Case c = make_case(trace, Device::Cpu);
  CompiledFusion compiled(c.fusion, {}, cpu_backend());
  compiled.run(c.args);  // compile and warm up
  for (auto _ : state) benchmark::DoNotOptimize(compiled.run(c.args));
}

void BM_CpuRun_Pointwise3(benchmark::State& state) { run_cpu(state, kPointwise); }
void BM_CpuRun_AliasOnly(benchmark::State& state) { run_cpu(state, kAliasOnly); }
void BM_CpuRun_Pointwise10(benchmark::State& state) { run_cpu(state, kTenOps); }

// The lookup alone: argument checks and the plan found for the arguments' layouts.
void BM_Lookup(benchmark::State& state) {
  Case c = make_case(kPointwise, Device::Cpu);
  CompiledFusion compiled(c.fusion, {}, cpu_backend());
  compiled.run(c.args);
  for (auto _ : state) benchmark::DoNotOptimize(&compiled.plan_for(c.args));
}

// Packing one CUDA kernel's argument block (no GPU needed: the kernel is only generated).
void BM_PackLaunchCuda(benchmark::State& state) {
  Case c = make_case(kPointwise, Device::Cpu);
  Plan plan = plan_fusion(*c.fusion, contiguous_input_layouts(*c.fusion), {});
  const Segment* seg = nullptr;
  for (const Segment& s : plan.segments)
    if (s.kind == SegmentKind::Kernel) seg = &s;
  GeneratedKernel kernel = generate_kernel(seg->spec, Target::Cuda);
  std::vector<KernelBuffer> ins, outs;
  std::vector<Scalar> scalars(seg->inputs.size());
  std::vector<std::byte> fake(4096);
  for (const Layout& l : seg->spec.input_layouts) ins.push_back({fake.data(), &l});
  for (const Layout& l : seg->spec.output_layouts) outs.push_back({fake.data(), &l});
  LaunchBlock block;
  for (auto _ : state) {
    pack_launch(kernel, KernelArgs{ins, scalars, outs, nullptr}, 132, block);
    benchmark::DoNotOptimize(block.args.data());
  }
}

// ---- CUDA ----

std::shared_ptr<CudaBackend> cuda_backend() {
  static auto backend = std::make_shared<CudaBackend>(0);
  return backend;
}

// A RunHooks allocator that hands out one preallocated device buffer (outputs are dropped before
// the next run, and each case here allocates one buffer per run), without touching the driver or
// the heap.
struct ReusedBuffer {
  explicit ReusedBuffer(int64_t bytes) : memory(std::make_shared<DeviceBuffer>(bytes)) {}
  std::shared_ptr<DeviceBuffer> memory;
  RunHooks hooks() const {
    RunHooks h;
    DeviceBuffer* m = memory.get();
    const std::shared_ptr<DeviceBuffer>* keep = &memory;
    h.allocate = [m, keep](DType dtype, const Layout&, int64_t bytes) {
      return Tensor{dtype, Layout{}, Device::Cuda, std::shared_ptr<void>(*keep, m->data()),
                    static_cast<std::byte*>(m->data()), bytes};
    };
    return h;
  }
};

void run_cuda(benchmark::State& state, const char* trace, bool driver_alloc) {
  Case c = make_case(trace, Device::Cuda);
  ExecutorOptions options;
  options.device = Device::Cuda;
  CompiledFusion compiled(c.fusion, options, cuda_backend());
  ReusedBuffer buffer(1 << 20);
  const RunHooks hooks = driver_alloc ? RunHooks{} : buffer.hooks();
  compiled.run(c.args, hooks);
  cuda_synchronize();
  int64_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(compiled.run(c.args, hooks));
    if (++n % 4096 == 0) cuda_synchronize();  // keeps the launch queue from filling up
  }
  cuda_synchronize();
}

void BM_CudaRun_Pointwise3(benchmark::State& state) { run_cuda(state, kPointwise, false); }
void BM_CudaRun_AliasOnly(benchmark::State& state) { run_cuda(state, kAliasOnly, false); }
void BM_CudaRun_Pointwise10(benchmark::State& state) { run_cuda(state, kTenOps, false); }
void BM_CudaRun_Pointwise3_DriverAlloc(benchmark::State& state) { run_cuda(state, kPointwise, true); }

// A bare cuLaunchKernel of a trivial kernel with 4 arguments: the floor the fused path is
// measured against.
void BM_CudaBareLaunch4Args(benchmark::State& state) {
  static constexpr const char* kTrivial =
      "extern \"C\" __global__ void vf_trivial(float* a, const float* b, int n, float s) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) a[i] = b[i] * s;\n"
      "}\n";
  const CudaDevice& device = cuda_device(0);
  CompiledCuda compiled = nvrtc_compile(kTrivial, "vf_trivial.cu", device.cc_major, device.cc_minor);
  CudaKernel kernel(device, compiled.image, "vf_trivial");
  DeviceBuffer a(4096), b(4096);
  void* pa = a.data();
  void* pb = b.data();
  int n = 1024;
  float s = 2.0f;
  void* params[] = {&pa, &pb, &n, &s};
  const CudaDriverApi& api = cuda_driver_api();
  int64_t i = 0;
  for (auto _ : state) {
    cuda_check(api.cuLaunchKernel(kernel.function(), 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr),
               "cuLaunchKernel");
    if (++i % 4096 == 0) cuda_synchronize();
  }
  cuda_synchronize();
}

}  // namespace
}  // namespace vf

int main(int argc, char** argv) {
  using namespace vf;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RegisterBenchmark("BM_Lookup", BM_Lookup);
  benchmark::RegisterBenchmark("BM_PackLaunchCuda", BM_PackLaunchCuda);
  benchmark::RegisterBenchmark("BM_CpuRun_Pointwise3", BM_CpuRun_Pointwise3);
  benchmark::RegisterBenchmark("BM_CpuRun_AliasOnly", BM_CpuRun_AliasOnly);
  benchmark::RegisterBenchmark("BM_CpuRun_Pointwise10", BM_CpuRun_Pointwise10);
  std::string why_not;
  if (!cuda_available())
    why_not = "no CUDA device (the driver libcuda.so.1 or a GPU is missing)";
  else if (!nvrtc_available())
    why_not = "NVRTC not found (searched " + nvrtc_search_list() + ")";
  if (why_not.empty()) {
    // The bare launch first and last, so that drift during the run shows.
    benchmark::RegisterBenchmark("BM_CudaBareLaunch4Args", BM_CudaBareLaunch4Args);
    benchmark::RegisterBenchmark("BM_CudaRun_Pointwise3", BM_CudaRun_Pointwise3);
    benchmark::RegisterBenchmark("BM_CudaRun_AliasOnly", BM_CudaRun_AliasOnly);
    benchmark::RegisterBenchmark("BM_CudaRun_Pointwise10", BM_CudaRun_Pointwise10);
    benchmark::RegisterBenchmark("BM_CudaRun_Pointwise3_DriverAlloc", BM_CudaRun_Pointwise3_DriverAlloc);
    benchmark::RegisterBenchmark("BM_CudaBareLaunch4Args/again", BM_CudaBareLaunch4Args);
  } else {
    std::fprintf(stderr, "CUDA benchmarks skipped: %s\n", why_not.c_str());
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
