// Bookend (optional, off by default): which view ops Thunder's old strategy peels off a fusion.
//
// Leading: view ops whose tensor inputs are fusion inputs or results of leading ops (so chains
// peel). Trailing: view ops, not leading, whose results are used only by fusion outputs or by
// trailing ops. Peeled ops run as an eager framework runs them: a view where the view algebra
// allows it, otherwise a copy into a new buffer. The rest is fused. It exists to compare plans.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace vf {

struct BookendSplit {
  std::vector<bool> leading;   // indexed by Node::id
  std::vector<bool> trailing;  // indexed by Node::id
};

BookendSplit find_bookends(const Fusion& fusion);

}  // namespace vf
