// Rewrites each scatter into one that the kernels compute: scatter_add onto zeros in a dtype with
// atomic adds, scatter_max onto a full of i32 or i64.
//
// A scatter kernel adds its source into an output that the launch zeroes (codegen/lower_kernel.h),
// with CUDA atomics, which exist for f32, f64, i32 and i64. So
//
//   r = scatter_add(a, index, src)  ->  s = scatter_add(full(0, acc), index, convert(src, acc))
//                                       r = convert(add(convert(a, acc), s), a.dtype)
//
// where acc is float32 for float16 and bfloat16, int64 for the integers narrower than 32 bits, and
// the dtype otherwise; the add is left out when a is already a full of +0, and the converts when
// acc is the dtype. This is the IR's definition of scatter_add (ir/ir.h: what lands on an element
// is summed from 0 in the compute type, then added to a's element and rounded once), so the result
// is the reference's; the add and the converts are elementwise ops that fuse with a's producer and
// the result's consumers.
//
// scatter_max's kernels fill their output with the base first, so they take a full of an integer
// in i32 or i64 (CUDA's atomic max); every other one becomes
//
//   r = scatter_max(a, index, src)  ->  s = scatter_max(full(lowest, acc), index, convert(src, acc))
//                                       r = convert(maximum(convert(a, acc), s), a.dtype)
//
// acc int32 for the narrower integers; exact, since the max of widened values is the widened max.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion zero_based_scatters(const Fusion& fusion);

}  // namespace vf
