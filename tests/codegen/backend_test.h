// A test fixture over the backends: runs a fusion through the executor on the CPU backend and,
// where there is a GPU, on the CUDA backend, and compares every output with the reference.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "codegen/generate_kernel.h"
#include "frontend/trace_reader.h"
#include "ir/print_trace.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/executor.h"
#include "runtime/nvrtc_compiler.h"
#include "codegen_test_util.h"
#include "test_support.h"

namespace vf::test {

// The plan's kernels whose first nest satisfies `pred` (a scatter's, a scan's).
template <class Pred>
int kernels_where(const Plan& plan, Pred pred) {
  int n = 0;
  for (const Segment& s : plan.segments)
    if (s.kernel && !s.kernel->nests.empty() && pred(s.kernel->nests[0])) ++n;
  return n;
}

class BackendTest : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::Cuda) {
      VF_TEST_REQUIRE_GPU_AND_NVRTC();
      backend_ = std::make_shared<CudaBackend>(0);
    } else {
      backend_ = std::make_shared<CpuBackend>(cached_cpu_options());
    }
  }

  // Runs `f` on `inputs` and compares every output with the reference, at the tolerance of a
  // reduction of `terms` values; returns the plan used. On the CPU, every kernel's CUDA source is
  // also compiled with NVRTC (nvrtc_checks_enabled()).
  Plan check(std::shared_ptr<Fusion> f, const std::vector<HostArg>& inputs, int64_t terms) {
    Plan plan;
    const std::vector<HostTensor> outs = run(f, inputs, &plan);
    const std::vector<HostTensor> expected = run_reference(*f, inputs);
    EXPECT_EQ(outs.size(), expected.size());
    for (size_t o = 0; o < outs.size() && o < expected.size(); ++o) {
      const Comparison c = compare_tensors(outs[o], expected[o], reduction_tolerance(expected[o].dtype(), terms));
      EXPECT_TRUE(c.ok) << "output " << f->outputs()[o]->name << " on " << device_name(GetParam()) << ": "
                        << c.first_mismatch << " (" << c.mismatches << " mismatches)\n"
                        << "trace:\n" << print_trace(*f);
    }
    if (GetParam() == Device::Cpu && nvrtc_checks_enabled()) {
      for (const Segment& s : plan.segments) {
        if (s.kind != SegmentKind::Kernel) continue;
        const GeneratedKernel k = generate_kernel(s.spec, Target::Cuda);
        EXPECT_NO_THROW(nvrtc_compile(k.source, "reduction", 9, 0)) << k.source;
      }
    }
    return plan;
  }

  // Reads `trace` and checks it on seeded random inputs (indices in range), as check.
  Plan check_trace(const std::string& trace, int64_t terms, uint64_t seed = 2412) {
    auto f = std::make_shared<Fusion>(read_trace(trace));
    return check(f, random_inputs(*f, seed), terms);
  }

  // Runs `f` on `inputs` on this backend: its outputs, copied to the host, and (plan) its plan.
  std::vector<HostTensor> run(std::shared_ptr<Fusion> f, const std::vector<HostArg>& inputs, Plan* plan = nullptr) {
    CompiledFusion compiled(f, ExecutorOptions{.device = GetParam()}, backend_);
    std::vector<Arg> args;
    for (const HostArg& a : inputs) {
      if (const HostTensor* t = std::get_if<HostTensor>(&a))
        args.push_back(copy_to(to_tensor(*t), GetParam()));
      else
        args.push_back(std::get<Scalar>(a));
    }
    std::vector<HostTensor> outs;
    for (const Tensor& t : compiled.run(args)) outs.push_back(host_copy(t));
    if (plan) *plan = compiled.plan_for(args);
    return outs;
  }

  std::shared_ptr<Backend> backend_;
};

}  // namespace vf::test
