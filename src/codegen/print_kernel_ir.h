// Listings of the kernel IR and of schedules, for `viewfuse codegen --kernel-ir` and golden tests.
#pragma once

#include <string>

#include "codegen/kernel_ir.h"
#include "codegen/schedule.h"

namespace vf {

// The argument fields, the views loaded through, and each nest: its loop dims, its index
// expressions (j<id>, in arena order), its values (v<id>), reductions and stores. Loop vars print
// as i<d>, fields as f<k>, so the listing reads like the emitted source without its schedule.
//
//   nest #0 pointwise over out0 [f2, f3, f4], flat
//     j5 = i0 * f6
//     v0 = load bf16 in0 f7[j5]  unit i2
//     store out0 bf16 f9[j8] = v3
std::string print_kernel_ir(const KernelIR& ir);

// What `schedule` chose for each nest of `ir` and the launch shape:
//
//   schedule cuda: 32-bit index math, blocks of 128 threads, 12 per multiprocessor
//     nest #0 row-vector: packs of 8 elements, 2 per thread (loads v0, v4), grain 2048, dividers f10 f11
std::string print_schedule(const KernelIR& ir, const KernelSchedule& schedule);

}  // namespace vf
