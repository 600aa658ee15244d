// Argument checking and result-type inference for every op, with Thunder's prim semantics.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace vf {

// Checks a node's inputs and attributes, canonicalises the attributes in place (negative dims
// wrapped, reshape's -1 resolved) and returns the type of each result. Throws UserError whose
// message names the op, the offending argument, what was expected and what was given.
std::vector<ValueType> infer_types(OpKind op, const std::vector<Value*>& inputs, OpAttrs& attrs);

}  // namespace vf
