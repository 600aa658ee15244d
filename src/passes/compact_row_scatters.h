// Accumulates a scatter of few rows into many (an embedding's gradient) in one row per token, not in the whole table.
//
// An embedding's gradient adds each token's row into the row of a table its id names: a scatter_add
// onto zeros whose index is a 1-D index spread along the other dims. With more rows than tokens
// (Llama's 32,000 and nanoGPT's 50,304 against 8,192 tokens) most of the table stays zero, yet
// the float32 sums of the whole table are zeroed, added into and read again by the kernel that
// rounds them. Here each row the ids touch gets one row of a table of one row per token:
//
//   r = scatter_add(zeros [.., V, ..], spread(ids [N]), src)    (dim d, N * 2 <= V)
//     ->  code  = scatter_max(zeros i32 [V], ids, iota(N) + 1)     a touched row: its last token + 1
//         slot  = take(code, ids) - 1                              each token's row of the sums
//         sums  = scatter_add(zeros [.., N, ..], spread(slot), src)
//         r     = where(code > 0, take(sums, max(code - 1, 0), d), 0)
//
// Every token of a row adds into the same row of `sums`, in the index's order, so the result is the
// original's to the bit (ir/ir.h). The tables moved shrink from V rows to N: the zeroing, the adds'
// targets and the reads of the sums; the last line is elementwise and fuses into the kernel that
// reads r (the rounding to bf16). Applies when r is read only by ops that are not views, so that a
// kernel reads it anyway (a result that is an output, or a view of one, would cost one pass more
// than the original), its rows are at least 16 elements wide and some token adds (an empty index
// leaves nothing to compact). An id out of range misses on
// CUDA as in the original scatter: scatter_max skips it, take gives 0 for it, and its slot -1 is
// skipped too; the CPU's kernels report it.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion compact_row_scatters(const Fusion& fusion);

}  // namespace vf
