// schedule_cpu: the CPU's one schedule.
#include "codegen/schedule_cpu.h"

namespace vf {

KernelSchedule schedule_cpu(const KernelIR& ir) {
  KernelSchedule s;
  s.target = Target::Cpu;
  s.abi = ir.abi;
  s.nests.resize(ir.nests.size());
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (ir.nests[n].scatter) s.abi.nests[n].rows = 1;  // one work item: its points in order
    if (!ir.nests[n].is_reduction()) continue;
    s.nests[n].kind = NestKind::Reduction;
    s.abi.nests[n].team = 1;
  }
  finalize_abi(s.abi, false);
  return s;
}

}  // namespace vf
