// The executor: plans a fusion once per input-layout signature and runs the plan's segments.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/tensor.h"
#include "segment/plan.h"

namespace vf {

struct ExecutorOptions {
  Device device = Device::Cpu;
  bool bookend = false;
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
  // then runs. Outputs that alias an input share its buffer.
  std::vector<Tensor> run(const std::vector<Arg>& args, ExecutionStats* stats = nullptr);
  // The plan that `run` would use for these arguments.
  const Plan& plan_for(const std::vector<Arg>& args);

  const Fusion& fusion() const { return *fusion_; }
  const ExecutorOptions& options() const { return options_; }

 private:
  struct Prepared;
  const Prepared& prepare(const std::vector<Arg>& args);

  std::shared_ptr<const Fusion> fusion_;
  ExecutorOptions options_;
  std::shared_ptr<Backend> backend_;
  std::mutex mutex_;  // guards plans_
  std::vector<std::unique_ptr<Prepared>> plans_;
};

}  // namespace vf
