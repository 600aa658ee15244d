// Extracting a segment's nodes from a fusion into a fusion of its own.
#pragma once

#include <memory>
#include <vector>

#include "ir/ir.h"

namespace vf {

struct ExtractedSegment {
  std::shared_ptr<Fusion> fusion;
  std::vector<const Value*> inputs;  // original values for fusion->inputs(), in order
};

// The values `nodes` read that none of them defines, constants excepted, in the order first read:
// the inputs of the segment they make.
std::vector<const Value*> segment_inputs(const std::vector<const Node*>& nodes);

// Copies `nodes` (in program order) into a new fusion whose inputs are segment_inputs(nodes)
// (constants are copied as constants) and whose outputs are `outputs`.
ExtractedSegment extract_segment(const std::vector<const Node*>& nodes,
                                 const std::vector<const Value*>& outputs);

}  // namespace vf
