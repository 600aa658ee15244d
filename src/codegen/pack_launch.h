// Launches: the argument block and launch shape of one launch of a generated kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/generate_kernel.h"

namespace vf {

// The argument block and launch shape of one launch.
struct LaunchBlock {
  std::vector<std::byte> args;
  int64_t cpu_extent = 0;
  uint32_t grid = 1, block = 1, shared_bytes = 0;  // CUDA, 1-D
};

// Fills `block` for a launch of `kernel` on `args`, whose layouts must have the layout class the
// kernel was generated for. Reuses block's capacity: no allocation once warm. `sm_count` sizes
// the CUDA grid.
void pack_launch(const GeneratedKernel& kernel, const KernelArgs& args, int sm_count, LaunchBlock& block);

// The bits of a Divider field for divisor d (0 <= d < 2^31; 0 divides nothing and gets 1's):
// the vf_divider's m in the low 32 bits, its shift s above, n / d being (umulhi(n, m) + n) >> s.
uint64_t divider_bits(int64_t d);

}  // namespace vf
