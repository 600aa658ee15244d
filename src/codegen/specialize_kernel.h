// Size specialization: a generated kernel remade for the sizes, strides and offsets of one launch.
#pragma once

#include "codegen/pack_launch.h"

namespace vf {

// A generic kernel's sizes, strides and offsets are run-time fields of its argument block, so one
// kernel serves every size of its layout class. The kernel specialized to a packed launch `block`
// of `generic` reads every field but its data pointers and scalar inputs as a constant with the
// block's value (emit_args_struct), so that the compiler folds its index math, its divisions and
// its end-of-range tests. On CUDA, when the block's data pointers are 16-byte aligned, the
// specialized kernel takes them as aligned (its pack-alignment tests fold too), and it is told its
// launch shape (VF_BAKED_GRID and VF_BAKED_BLOCK, prelude_cuda.inc), so that a vector pass drops
// its end-of-range tests where the grid covers its points exactly. Its argument block is the
// generic kernel's: pack_launch fills both.
// `generic` must not be specialized already.
GeneratedKernel specialize_kernel(const GeneratedKernel& generic, const LaunchBlock& block);

// Whether `specialized` computes the launch `block` (packed for its generic kernel): every baked
// field holds the value baked in, the launch shape is the one baked in, and, when it takes its data
// pointers as aligned, they are. Reads the block only: no allocation.
bool specialization_matches(const GeneratedKernel& specialized, const LaunchBlock& block);

// `generic` specialized to a launch on the spec's own layouts, with data pointers at 16-byte
// aligned placeholder addresses and scalar inputs of 0, on a device of `sm_count` multiprocessors:
// the kernel a run on such buffers would specialize to (for `viewfuse codegen --specialize` and
// compile tests).
GeneratedKernel specialize_for_spec(const GeneratedKernel& generic, const KernelSpec& spec, int sm_count);

}  // namespace vf
