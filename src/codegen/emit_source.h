// Kernel IR to source text: the shared expression emitter and the two target emitters.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_ir.h"

namespace vf {

// C type names in generated code: the type a dtype is computed in, and the one it is stored as.
const char* compute_type(DType dtype);
const char* memory_type(DType dtype);

// `struct VfArgs { ... };` with members f<k> at their abi offsets (checked where the compiler has offsetof).
void emit_args_struct(const KernelAbi& abi, std::string& out);

// The statements of one point of a loop nest: every index and value node the stores need, in
// arena order, then the stores. `vars[d]` names loop variable d; `args` names the VfArgs object.
void emit_nest_body(const LoopNest& nest, const std::vector<std::string>& vars, const char* index_type,
                    const std::string& indent, std::string& out);

std::string emit_cpp(const KernelIR& ir, const std::string& entry);
std::string emit_cuda(const KernelIR& ir, const std::string& entry);

}  // namespace vf
