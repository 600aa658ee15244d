// Which path torch tensors take in _viewfuse: the TorchApi table of viewfuse._torch_fast, loaded
// when the first torch tensor arrives, or (without it) the attribute path of interop.cpp.
#pragma once

#include <string>
#include <utility>

#include "torch_api.h"

namespace vf::py {

// The table when viewfuse._torch_fast is built for the installed torch and the fast path is on;
// null otherwise. The first call loads it (viewfuse._torch_path.load; torch is imported by then).
const TorchApi* torch_api();

// Whether torch tensors take the fast path, and a sentence saying why (loads the table first).
std::pair<bool, std::string> torch_path_status();

// For tests: turns the fast path off (every torch tensor takes the attribute path) or back on;
// returns the previous setting.
bool set_torch_fast_path(bool enabled);

}  // namespace vf::py
