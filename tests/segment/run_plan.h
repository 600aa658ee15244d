// For the segment tests: a trace run through the executor on the CPU backend against the reference
// executor, a plan's library segment, and the ops of a (rewritten) fusion as text.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"

namespace vf::test {

// A fusion of one reduction `op` over `dims` of an input x of `dtype` and `shape`; its output is r.
inline Fusion one_reduction(OpKind op, DType dtype, const Shape& shape, std::vector<int64_t> dims) {
  Fusion f;
  Value* x = f.add_tensor_input("x", dtype, shape);
  f.add_output(f.add_node(op, {x}, DimsAttrs{std::move(dims)}, {"r"})[0]);
  return f;
}

// The plan the executor made for `text` with contiguous random inputs (seed), after checking each
// output against the reference at its output_tolerance. The fusion stays alive with the plan.
struct PlanRun {
  std::shared_ptr<Fusion> fusion;
  Plan plan;
};

inline PlanRun run_plan_against_reference(const std::string& text, uint64_t seed = 7) {
  static auto backend = std::make_shared<CpuBackend>();
  auto fusion = std::make_shared<Fusion>(read_trace(text));
  const std::vector<HostArg> host_args = random_inputs(*fusion, seed);
  std::vector<Arg> args;
  for (const HostArg& a : host_args)
    args.push_back(std::holds_alternative<HostTensor>(a) ? Arg(to_tensor(std::get<HostTensor>(a)))
                                                         : Arg(std::get<Scalar>(a)));
  const std::vector<HostTensor> expected = run_reference(*fusion, host_args);
  CompiledFusion compiled(fusion, ExecutorOptions{.device = Device::Cpu}, backend);
  const std::vector<Tensor> outs = compiled.run(args);
  EXPECT_EQ(outs.size(), expected.size());
  for (size_t i = 0; i < outs.size() && i < expected.size(); ++i) {
    const Comparison c =
        compare_tensors(as_host_tensor(outs[i]), expected[i], output_tolerance(fusion->outputs()[i]));
    EXPECT_TRUE(c.ok) << "output " << fusion->outputs()[i]->name << ": " << c.first_mismatch << "\n" << text;
  }
  return {fusion, compiled.plan_for(args)};
}

// The ops of a fusion, in order, as "op:input shape->output shape dtype" (the first input's shape).
// The plan's first library segment (a test failure, and the first segment, when there is none).
inline const Segment& library(const Plan& plan) {
  for (const Segment& s : plan.segments)
    if (s.kind == SegmentKind::Library) return s;
  ADD_FAILURE() << "no library segment";
  return plan.segments.at(0);
}

inline std::vector<std::string> ops_of(const Fusion& f) {
  std::vector<std::string> ops;
  for (const auto& n : f.nodes())
    ops.push_back(std::string(op_name(n->op)) + ":" +
                  shape_to_string(n->inputs.empty() ? Shape{} : n->inputs[0]->shape) + "->" +
                  shape_to_string(n->output()->shape) + " " + std::string(dtype_short_name(n->output()->dtype)));
  return ops;
}

}  // namespace vf::test
