// Kernel IR to source text: the shared expression emitter and the two target emitters.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel_ir.h"

namespace vf {

// C type names in generated code: the type a dtype is computed in, and the one it is stored as.
const char* compute_type(DType dtype);
const char* memory_type(DType dtype);

// `struct VfArgs { ... };` with members f<k> at their abi offsets (checked where the compiler has offsetof).
void emit_args_struct(const KernelAbi& abi, std::string& out);

// The statements of one point of a loop nest: every index and value node the stores need, in
// arena order, then the stores. `vars[d]` names loop variable d; the VfArgs object is `a`. With
// `flat` set (only for a flat nest), loads and stores address offset + flat instead.
// `load_override` maps Load value ids to the compute-type expression that replaces them.
void emit_nest_body(const LoopNest& nest, const std::vector<std::string>& vars, const char* index_type,
                    const std::string& indent, std::string& out, const std::string& flat = "",
                    const std::unordered_map<int, std::string>* load_override = nullptr);

// Definitions of the index expressions `roots` need, and the expression naming index id.
void emit_index_defs(const LoopNest& nest, const std::vector<int>& roots, const std::vector<std::string>& vars,
                     const char* index_type, const std::string& indent, std::string& out);
std::string index_ref(const LoopNest& nest, int id, const std::vector<std::string>& vars);

// The conversion of an element read from memory to its compute type, and back for a store.
std::string from_memory(DType dtype, const std::string& elem);
std::string store_value(DType dtype, const std::string& value);

// Passed as `flat` to emit_nest_body: loads read lane `lane` of pack p<value id>, stores write
// lane `lane` of pack s<store index> (the CUDA vector path declares both).
inline constexpr const char* kVectorLane = "<lane>";

std::string emit_cpp(const KernelIR& ir, const std::string& entry);
std::string emit_cuda(const KernelIR& ir, const std::string& entry);

}  // namespace vf
