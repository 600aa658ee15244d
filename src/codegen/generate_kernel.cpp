// generate_kernel: a lowered kernel's pipeline through scheduling to emission.
#include "codegen/generate_kernel.h"

#include "base/error.h"
#include "codegen/emit_source.h"
#include "codegen/fold_tanh_gelu.h"
#include "codegen/kernel_name.h"
#include "codegen/lower_kernel.h"
#include "codegen/schedule_cpu.h"
#include "codegen/schedule_cuda.h"

namespace vf {

GeneratedKernel generate_kernel(const KernelSpec& spec, Target target) {
  LoweredKernel lowered = lower_kernel(spec);
  VF_INTERNAL_CHECK(lowered.ok(), "generate_kernel: one kernel cannot compute the segment: ", lowered.problem);
  return generate_kernel(spec, lowered.ir, target);
}

KernelSchedule schedule_kernel(const KernelSpec& spec, const KernelIR& ir, Target target) {
  return target == Target::Cuda ? schedule_cuda(spec, ir) : schedule_cpu(ir);
}

KernelIR rewrite_kernel_ir(const KernelIR& lowered) {
  KernelIR ir = lowered;
  fold_tanh_gelu(ir);
  return ir;
}

// The pipeline from a lowered kernel to its source, in order:
//  1. Rewrites of the kernel IR that the targets share (rewrite_kernel_ir: fold_tanh_gelu).
//  2. Scheduling: which loop each nest takes, its packs, tiles or team, and the launch shape, with
//     the argument block's Divider fields and layout (schedule_cuda.h, schedule_cpu.h). After the
//     rewrites, which change what the nests compute.
//  3. Emission: the schedule printed as C++ or CUDA (emit_source.h), deciding nothing, under the
//     entry name of the lowered IR (kernel_name.h), which explain prints too.
GeneratedKernel generate_kernel(const KernelSpec& spec, const KernelIR& lowered, Target target) {
  const KernelIR ir = rewrite_kernel_ir(lowered);
  const KernelSchedule schedule = schedule_kernel(spec, ir, target);
  GeneratedKernel k;
  k.target = target;
  k.entry = kernel_name(*spec.fusion, lowered);
  k.source = target == Target::Cuda ? emit_cuda(ir, schedule, k.entry) : emit_cpp(ir, schedule, k.entry);
  k.abi = schedule.abi;
  return k;
}

}  // namespace vf
