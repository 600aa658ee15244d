// Code generation: a lowered KernelSpec to the source of one kernel for a target, and its launch contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"
#include "codegen/schedule.h"

namespace vf {

// One self-contained translation unit. Sizes and strides are run-time arguments, so two specs
// that differ only in sizes (same structure, dtypes and layout class) give the same source: the
// source is the cache key.
//   CPU:  extern "C" void ENTRY(const void* args, int64_t begin, int64_t end);
//         covers the work items [begin, end) of [0, LaunchBlock::cpu_extent).
//   CUDA: extern "C" __global__ void ENTRY(ARGS args); ARGS is LaunchBlock::args, by value.
struct GeneratedKernel {
  Target target = Target::Cpu;
  std::string entry;
  std::string source;
  KernelAbi abi;  // how a launch's arguments are laid out (codegen/kernel_abi.h)
  // A size-specialized kernel (codegen/specialize_kernel.h): the argument block and grid it was
  // made for, and whether it takes its data pointers as 16-byte aligned. `baked` is empty for a
  // generic kernel.
  std::vector<std::byte> baked;
  uint32_t baked_grid = 0;
  bool aligned_pointers = false;
};

// `ir` is spec lowered (lower_kernel.h); the second form lowers spec itself (InternalError when one
// kernel cannot compute it).
GeneratedKernel generate_kernel(const KernelSpec& spec, const KernelIR& ir, Target target);
// The steps of generate_kernel: the lowered IR after the rewrites the targets share
// (fold_tanh_gelu.h), and its schedule (schedule_cuda or schedule_cpu).
KernelIR rewrite_kernel_ir(const KernelIR& lowered);
KernelSchedule schedule_kernel(const KernelSpec& spec, const KernelIR& ir, Target target);
GeneratedKernel generate_kernel(const KernelSpec& spec, Target target);

}  // namespace vf
