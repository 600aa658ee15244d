// What the planner hands to code generation: one segment, to be computed by one kernel.
#pragma once

#include <span>
#include <vector>

#include "base/scalar.h"
#include "ir/ir.h"
#include "layout/layout.h"

namespace vf {

enum class Target { Cpu, Cuda };

// The segment is a Fusion of its own: its inputs are buffers (or scalars) the kernel reads, its
// outputs the buffers it writes. Every view op inside it becomes index math on the loads.
struct KernelSpec {
  const Fusion* fusion = nullptr;
  std::vector<Layout> input_layouts;   // one per fusion input; an empty Layout for scalar inputs
  std::vector<Layout> output_layouts;  // one per fusion output: the layout the kernel writes
};

// A buffer as a kernel sees it: the address of the buffer's first byte (the layout's offset is
// applied by the kernel) and the layout of the tensor in it.
struct KernelBuffer {
  void* data = nullptr;
  const Layout* layout = nullptr;
};

// The arguments of one launch.
struct KernelArgs {
  std::span<const KernelBuffer> inputs;   // one per fusion input; data is null for scalar inputs
  std::span<const Scalar> scalars;        // one per fusion input; read only for scalar inputs
  std::span<const KernelBuffer> outputs;  // one per fusion output
  void* stream = nullptr;                 // a CUstream for CUDA; ignored by the CPU backend
};

}  // namespace vf
