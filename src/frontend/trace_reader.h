// The Thunder trace reader: Python-source traces (REFERENCE.md section 3) to a Fusion.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"
#include "ir/ir.h"

namespace vf {

// Reads one `def NAME(args):` function. Input types come from `# name: "device dtype[shape]"`
// comments (tensors) or `# name: "int 3"`-style comments (numbers); result annotations, when
// present, are checked against the inferred types. Throws TraceError (file, line, column) for
// malformed text, unsupported ops and failed checks; never anything else on user input.
Fusion read_trace(std::string_view text, std::string_view filename = "<trace>");
Fusion read_trace_file(const std::string& path);

}  // namespace vf
