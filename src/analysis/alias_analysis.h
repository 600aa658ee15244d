// Alias analysis: which values can be views of a fusion input's storage, given the inputs' layouts.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "layout/layout.h"

namespace vf {

struct AliasInfo {
  const Value* source = nullptr;  // the fusion input whose storage the value views
  Layout layout;                  // the value's layout in that storage
};

// The result, indexed by Value::id. A value aliases when it is a fusion input or a view op's
// result whose input aliases and whose layout the view algebra can express.
struct AliasAnalysis {
  std::vector<std::optional<AliasInfo>> by_value;  // indexed by Value::id
  std::vector<std::string> copy_reason;            // indexed by Value::id: why a view op's result
                                                   // cannot alias (empty when it can or is no view)
  const AliasInfo* find(const Value* v) const {
    return by_value[v->id] ? &*by_value[v->id] : nullptr;
  }
};

// `input_layouts` has one entry per fusion input (ignored for scalar inputs). Pure layout
// arithmetic through layout/view_algebra.h; reads nothing but the fusion and the layouts.
AliasAnalysis analyze_aliases(const Fusion& fusion, const std::vector<Layout>& input_layouts);

// The same from a set of values whose storage is already known (indexed by Value::id): fusion
// inputs, and values an earlier step materialised (bookend's eager ops). A known value keeps its
// entry; view ops propagate from known values.
AliasAnalysis analyze_aliases(const Fusion& fusion, std::vector<std::optional<AliasInfo>> known);

}  // namespace vf
