// The executor: plans a fusion once per input-layout signature and runs the plan's segments.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/tensor.h"
#include "segment/plan.h"

namespace vf {

struct ExecutorOptions {
  Device device = Device::Cpu;
  PlanOptions plan{};  // how each input-layout signature is planned (bookend, reductions)
};

// Per-call hooks for callers that own memory and streams (the Python package: PyTorch's caching
// allocator and current stream).
struct RunHooks {
  // Allocates every buffer the run writes (outputs and temporaries) on the fusion's device; the
  // returned tensor's owner keeps it alive (its data and buffer_bytes are used, its layout is
  // not: the run keeps layouts itself). Empty: allocate_tensor.
  std::function<Tensor(DType dtype, const Layout& layout, int64_t bytes)> allocate;
  void* stream = nullptr;  // a CUstream for kernel launches on CUDA; null: the default stream
};

// What one execution did, counted from its real allocations and launches.
struct ExecutionStats {
  int kernels_launched = 0;
  int64_t allocated_bytes = 0;
  int64_t peak_bytes = 0;  // of the buffers the execution allocated, alive at once
};

class CompiledFusion {
 public:
  // `backend` runs kernel segments; when null they run through the reference executor.
  CompiledFusion(std::shared_ptr<const Fusion> fusion, ExecutorOptions options,
                 std::shared_ptr<Backend> backend);
  ~CompiledFusion();

  // Checks the arguments against the fusion's inputs (UserError naming the input otherwise),
  // then runs. Outputs that alias an input share its buffer. Thread-safe. A run whose layouts
  // were seen before (a cache hit) builds no strings, searches no map and allocates nothing but
  // its buffers and the returned tensors: it works in a per-call scratch taken from a pool.
  std::vector<Tensor> run(const std::vector<Arg>& args, ExecutionStats* stats = nullptr);
  // The same with the caller's allocator and stream.
  std::vector<Tensor> run(const std::vector<Arg>& args, const RunHooks& hooks, ExecutionStats* stats = nullptr);
  // The plan that `run` would use for these arguments.
  const Plan& plan_for(const std::vector<Arg>& args);

  const Fusion& fusion() const { return *fusion_; }
  const ExecutorOptions& options() const { return options_; }

 private:
  struct Prepared;
  const Prepared& prepare(const std::vector<Arg>& args);
  const Prepared* find_prepared(const std::vector<Arg>& args) const;
  // Plans for these arguments with `plan_options` and compiles the plan's kernels, independent
  // segments in parallel; plans again without matmul epilogues where cuBLASLt has no algorithm
  // for one (the plan's rewrites say so).
  std::unique_ptr<Prepared> build_prepared(const std::vector<Arg>& args, const PlanOptions& plan_options);

  std::shared_ptr<const Fusion> fusion_;
  ExecutorOptions options_;
  std::shared_ptr<Backend> backend_;
  mutable std::shared_mutex plans_mutex_;  // guards plans_: shared on a lookup, unique to add
  std::mutex prepare_mutex_;               // one plan is built at a time
  std::vector<std::unique_ptr<Prepared>> plans_;
};

}  // namespace vf
