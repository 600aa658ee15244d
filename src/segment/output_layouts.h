// Output layouts: which buffers a kernel writes for the values it must produce, and their layouts.
//
// Values related by chains of view ops share one buffer when the view algebra allows it: the
// buffer is laid out for the most downstream value that makes every other one a view of it, so
// that later views are free. Any other value is written densely in the memory order of its
// dominant input (the same-shaped kernel input it is computed from elementwise), or, when it is a
// chain of views of a value computed in the kernel, in that value's order carried through the views.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"
#include "segment/plan.h"

namespace vf {

struct WrittenBuffers {
  std::vector<const Value*> roots;  // values written to a buffer of their own, in `produced` order
  std::vector<std::pair<const Value*, Placement>> placements;  // one per produced value
};

// `produced`: the values the kernel must make available; `in_group(node)`: whether a node is
// evaluated by this kernel; `placement_of(v)`: where an input of the kernel lives (null if none).
WrittenBuffers choose_output_layouts(const std::vector<const Value*>& produced,
                                     const std::function<bool(const Node*)>& in_group,
                                     const std::function<const Placement*(const Value*)>& placement_of);

}  // namespace vf
