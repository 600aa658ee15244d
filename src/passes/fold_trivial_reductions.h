// Folds the reductions that reduce nothing: dims of size 1 are dropped, and empty dims give the identity.
//
// A reduction over dims of size 1 combines one element per result, so it is the element itself:
//
//   r = sum(x, dims), every dim of size 1  ->  r = reshape(x, r's shape)   (a view)
//   r = sum(x, dims), some of size 1        ->  r = reshape(sum(x', dims'), r's shape)
//
// where x' is x without its size-1 dims (a view) and dims' the other reduced dims, renumbered,
// for sum, prod, amax and amin (converted when the result's dtype differs), and var and var_mean
// when some reduced dim is longer than 1 (over size-1 dims alone a variance is 0 or NaN, not a
// view). A reduction over an empty dim whose result is not empty is `full` of the op's identity
// (0, 1, the lowest or the highest value). Planning then sees views where the program had
// reductions of one-element rows (RoPE's backward sums over a pair dim of size 1), and the
// reductions left have the extents that decide which of them share a kernel. The results equal
// the original's, but for the sign of a zero: a sum of one -0.0 is -0.0 here. Likewise a cumsum
// along a dim of size 1 (or of a 0-dim tensor) is a reshape of its input.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion fold_trivial_reductions(const Fusion& fusion);

}  // namespace vf
