// The tool's link to the backends: choosing one per device and moving tensors to and from it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"
#include "reference/reference_executor.h"
#include "runtime/backend.h"
#include "runtime/tensor.h"

namespace vf::tool {

std::shared_ptr<Backend> make_backend(Device device);
std::vector<Arg> upload(const std::vector<HostArg>& args, Device device);
std::vector<HostTensor> download(const std::vector<Tensor>& tensors);
// The generated source of a kernel segment (its spec and lowered IR); with sm_count > 0, the kernel
// specialized to the spec's sizes for a device of that many multiprocessors (codegen/specialize_kernel.h).
std::string kernel_source(const KernelSpec& spec, const KernelIR& ir, Target target, int sm_count = 0);

}  // namespace vf::tool
