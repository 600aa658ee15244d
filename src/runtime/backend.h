// Backends: compile a KernelSpec into a kernel and launch it on buffers. CPU and CUDA implement it.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"

namespace vf {

// A compiled kernel for one segment structure and one layout class. Launching it on buffers of
// the same layout class but other sizes is valid: sizes and strides are run-time arguments.
class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  virtual void launch(const KernelArgs& args) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Target target() const = 0;
  // Generates and compiles the kernel of `spec` from its lowered IR (Segment::kernel), or finds it
  // in the in-memory or disk cache. Thread-safe. Throws DeviceError when the compiler or device is
  // unavailable.
  virtual std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec, const KernelIR& ir) = 0;
  // The same, lowering `spec` first (tests and benchmarks that build specs by hand); InternalError
  // when one kernel cannot compute it.
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec);
  // Number of kernels this backend has compiled (cache misses), for tests.
  virtual int64_t compile_count() const = 0;
};

}  // namespace vf
