// Splits reductions of few, long rows into two stages, so that they run on many teams.
//
// A reduction kernel gives each row to one team of threads (one block at most on CUDA, one thread
// on the CPU backend). A reduction with few rows, each longer than a team keeps in registers,
// would leave most of the machine idle: `x.sum()` over a large tensor is one row. Such a sum,
// prod, amax or amin of a floating tensor becomes
//
//   r = op(x, dims)  ->  y = reshape(x, the reduced dims replaced by [chunks, chunk])
//                        p = op(y, [the chunk dim])      (rows x chunks rows of `chunk` elements)
//                        r = op(p, [the chunks dim])     (rows rows of `chunks` elements)
//
// in place when the reduced dims are adjacent (an outer reduction keeps its memory order), else
// after a transpose that moves the kept dims first. The chunk divides the reduced extent; sums and
// products of half types take float32 partials (converted back at the end), as the unsplit
// reduction accumulates in float32. The two stages
// have different extents, so planning gives each a kernel and the partials a buffer of their own.
// Results differ from the unsplit reduction only in the order of floating additions and
// multiplications. var and var_mean become the two passes their kernels make, each sum split so:
//
//   mean = sum(x, dims) / n;   var = sum((x - mean)^2, dims) / max(0, n - correction)
//
// in float32 (float64 for float64), converted to the outputs' type.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

// Reductions split when they have fewer than kSplitFewRows rows of more than kSplitLongRow
// elements (more than a CUDA team keeps in registers) and the row length has a divisor in
// [kSplitMinChunk, kSplitMaxChunk] (the largest such is the chunk: rows of 4096 are what the
// measured normalization and softmax kernels take, docs/benchmarks.md).
inline constexpr int64_t kSplitFewRows = 1024, kSplitLongRow = 32768, kSplitMinChunk = 512, kSplitMaxChunk = 4096;

// The rewritten fusion (null when nothing was split) and a note per split reduction.
RewrittenFusion split_long_reductions(const Fusion& fusion);

}  // namespace vf
