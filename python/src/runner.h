// The fast path behind FusionDefinition.execute: one compiled fusion per input signature, run on
// DLPack arguments with outputs allocated by PyTorch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "interop.h"
#include "runtime/executor.h"

namespace vf::py {

class Runner {
 public:
  // `builder(shapes, dtypes)` returns the trace text of the fusion for one input signature:
  // shapes is a list with a tuple per tensor input (None for numbers), dtypes a list of dtype
  // names (or scalar kinds). `bookend` is PlanOptions::bookend; `keep_round_trips` turns
  // PlanOptions::elide_round_trips off; `deterministic` is PlanOptions::deterministic_scatters;
  // `matmul_epilogues` is PlanOptions::matmul_epilogues.
  Runner(nb::object builder, bool bookend, bool keep_round_trips, bool deterministic, bool matmul_epilogues)
      : builder_(std::move(builder)) {
    plan_options_.bookend = bookend;
    plan_options_.elide_round_trips = !keep_round_trips;
    plan_options_.deterministic_scatters = deterministic;
    plan_options_.matmul_epilogues = matmul_epilogues;
  }

  // Runs on the inputs and returns the outputs (a list).
  nb::list run(nb::handle inputs);
  // `viewfuse explain --json` of the plan `run` would use, as JSON text.
  std::string explain_json(nb::handle inputs);
  std::string explain_text(nb::handle inputs);
  // The trace the fusion for these inputs was built from.
  std::string trace(nb::handle inputs);
  // Number of input signatures compiled so far.
  size_t cache_size() const { return cache_.size(); }
  bool bookend() const { return plan_options_.bookend; }
  bool keep_round_trips() const { return !plan_options_.elide_round_trips; }
  bool deterministic() const { return plan_options_.deterministic_scatters; }
  bool matmul_epilogues() const { return plan_options_.matmul_epilogues; }

 private:
  CompiledFusion& compiled(const std::vector<Arg>& args, const CallInfo& info);
  std::vector<Arg> wrap(nb::handle inputs, CallInfo& info);

  nb::object builder_;
  PlanOptions plan_options_;  // of every fusion it compiles
  std::map<std::vector<int64_t>, std::shared_ptr<CompiledFusion>> cache_;
  std::vector<int64_t> last_key_;
  CompiledFusion* last_ = nullptr;
};

// The backend for a device, shared by every Runner of the process (and so their kernel caches).
std::shared_ptr<Backend> backend_for(Device device, int device_id);

}  // namespace vf::py
