// Folds sums of one-hot rows: a sum along a dim of values that are zero but where an iota along it
// equals an index that does not vary along it is that one value, or zero.
//
//   r = sum(where(eq(iota_d, s) [& k], v, 0), {d})  ->  r = where(0 <= s' < n [& k'], v', 0) + 0
//
// where iota_d is broadcast_in_dim of iota(n) (start 0, step 1) along dim d of length n, s an
// integer index and k, v values that do not vary along d (broadcasts that do not map a dim onto d,
// full, scalars, and elementwise ops of those), and s', k', v' the same values rebuilt without dim
// d. Unary ops that keep a zero zero (convert_element_type, neg) may lie between the where and the
// sum; they are applied to the folded value. An integer index equals at most one iota element, so
// the sum adds one term to zeros: exact; the `+ 0` gives the sum's +0.0 where the term is -0.0.
//
// Thunder's cross-entropy backward sums nll_loss_backward's one-hot gradient along the classes
// (log_softmax's backward): a row of 50,304 compares and adds before the row's loads, which left
// nanoGPT's kernel at 62% of DRAM bandwidth; folded, the kernel is elementwise with a row value.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion fold_one_hot_sums(const Fusion& fusion);

}  // namespace vf
