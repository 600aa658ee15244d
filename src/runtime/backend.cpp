// Backend::prepare for a spec that has not been lowered yet.
#include "runtime/backend.h"

#include "base/error.h"
#include "codegen/lower_kernel.h"

namespace vf {

std::shared_ptr<const PreparedKernel> Backend::prepare(const KernelSpec& spec) {
  const LoweredKernel lowered = lower_kernel(spec);
  VF_INTERNAL_CHECK(lowered.ok(), "Backend::prepare: one kernel cannot compute the segment: ", lowered.problem);
  return prepare(spec, lowered.ir);
}

}  // namespace vf
