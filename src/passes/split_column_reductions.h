// Splits reductions over the leading dims (column reductions) so that the rows' kernel computes them.
//
// A bias's or a norm weight's gradient sums [B, S, C] over (0, 1) to [C]: a reduction over the
// rows of a [rows, columns] tensor whose other work (the input gradient, a norm's row sums) goes
// row by row. Such a sum, prod, amax or amin becomes two stages:
//
//   r = op(x, (0, .., k-1))   x: [R0, .., R_{k-1}, I...]
//     ->  p = op(reshape(x, [R0, .., R_{k-1} / C, C, I...]), (k,))   each chunk of C rows' partial result
//         r = op(p, (0, .., k-1))                                     the partials reduced
//
// The first stage is a column reduction (codegen/lower_kernel.h kMaxSerialRows, kernel_ir.h serial
// nests): one team walks a chunk's C rows in order, combining each column's values as it goes, so
// the kernel that reduces or stores those rows computes it in the same pass over them (one read of
// the rows for a norm's backward, its input gradient and its weight's and bias's gradients). The
// second stage reduces the partials, R / C rows of I columns, in a kernel of its own. C is the
// largest power of two up to 32 dividing R_{k-1} that leaves at least `chunks` chunks (teams
// enough for the GPU; PlanOptions::column_chunks, kColumnChunks by default); sums and products of
// half types take float32 partials, integers int64, converted back at the end. Applied when the
// rows number at least 2 * `chunks` and the columns at least kColumnMinColumns (a warp's width:
// fewer would leave a team's lanes idle).
// Results differ from the unsplit reduction only in the order of floating additions.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

inline constexpr int64_t kColumnChunks = 512, kColumnMinColumns = 32, kColumnMaxChunk = 32;

// The rewritten fusion (null when nothing was split) and a note per split reduction.
RewrittenFusion split_column_reductions(const Fusion& fusion, int64_t chunks = kColumnChunks);

}  // namespace vf
