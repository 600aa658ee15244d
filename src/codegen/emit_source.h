// Kernel IR to source text: the shared expression emitter and the two target emitters.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/schedule.h"

namespace vf {

// The target-independent part of every kernel's prelude (prelude_common.inc): each target's
// source writes it after its own part.
extern const char kPreludeCommon[];

// The argument block's member holding field k: `a.f<k>`.
std::string field_name(int k);

// C type names in generated code: the type a dtype is computed in, and the one it is stored as.
const char* compute_type(DType dtype);
const char* memory_type(DType dtype);

// `struct VfArgs { ... };` with members f<k> at their abi offsets (checked where the compiler has
// offsetof). With `baked`, a packed argument block of this abi (specialize_kernel.h), each baked
// field f<k> is instead a `static constexpr` member holding the block's value, and the block's
// bytes stay in an unread member f<k>_launch: `a.f<k>` reads a constant, the layout is the same.
// With `aligned_pointers` (CUDA), the data pointers are vf_ptr16, 16-byte aligned to the compiler.
void emit_args_struct(const KernelAbi& abi, std::string& out, const std::byte* baked = nullptr,
                      bool aligned_pointers = false);
// Whether a size-specialized kernel bakes field f in: every field but data pointers and scalar inputs.
bool is_baked_field(const AbiField& f);

// The statements of one point of a loop nest: every index and value node the stores need, in
// arena order, then the stores. `vars[d]` names loop variable d; the VfArgs object is `a`. With
// `flat` set (only for a flat nest), loads and stores address offset + flat instead.
// `value_override` maps value ids to the compute-type expression that replaces them (a guarded
// Load keeps its guard around it); `index_override` maps index ids to the expression that defines
// them instead of their operands.
void emit_nest_body(const LoopNest& nest, const std::vector<std::string>& vars, const char* index_type,
                    const std::string& indent, std::string& out, const std::string& flat = "",
                    const std::unordered_map<int, std::string>* value_override = nullptr,
                    const std::unordered_map<int, std::string>* index_override = nullptr);

// Statements unravelling the row-major position in variable `rest` into vars[first, end), whose
// sizes are `size_prefix`<d>: `decl` vars[d] = rest % size; rest /= size (the first dim takes
// what is left). `rest` must be a mutable variable of the index type. Dim `skip` is left out (a
// line's position: the dims but the one it runs along).
void emit_position_unravel(const std::vector<std::string>& vars, size_t first, size_t end, const std::string& size_prefix,
                           const std::string& rest, const std::string& decl, const std::string& indent, std::string& out,
                           size_t skip = static_cast<size_t>(-1));
// One line of a walked nest (a scan's, an in-order scatter's; kernel_ir.h walk_dim), at indent 6,
// inside a loop whose mutable variable `rest` holds the line's position among the lines: the other
// loop vars unravelled from it (sizes `size_prefix`<d>), the scan accumulators at 0 (`sc<id>` for
// each Scanned value), then the loop along walk_dim around the nest's body.
void emit_walked_line(const LoopNest& nest, const std::vector<std::string>& vars, const std::string& size_prefix,
                      const char* index_type, std::string& out);

// Definitions of the index expressions `roots` need, and the expression naming index id.
void emit_index_defs(const LoopNest& nest, const std::vector<int>& roots, const std::vector<std::string>& vars,
                     const char* index_type, const std::string& indent, std::string& out);
std::string index_ref(const LoopNest& nest, int id, const std::vector<std::string>& vars);

// `vf_pack<memory type, v>`: v elements moved by one load or store (CUDA).
std::string pack_type(DType dtype, int v);
// The pack of v elements at element `index` of the buffer at `ptr`, as an lvalue: read-only with
// `read`, else to store into.
std::string pack_at(DType dtype, int v, const std::string& ptr, const std::string& index, bool read);
// Element `index` of the buffer at `ptr`, read and converted to its compute type.
std::string load_expr(DType dtype, const std::string& ptr, const std::string& index);

// The conversion of an element read from memory to its compute type, and back for a store.
std::string from_memory(DType dtype, const std::string& elem);
std::string store_value(DType dtype, const std::string& value);
// The stored form of a store's value (a cast to the stored half type is rounded once).
std::string store_value(const LoopNest& nest, const StoreStmt& s);

// Passed as `flat` to emit_nest_body: loads read lane `lane` of pack p<value id>, stores write
// lane `lane` of pack s<store index> (the CUDA vector path declares both).
inline constexpr const char* kVectorLane = "<lane>";

// Emission of a reduction nest's expressions in scopes (kernel_ir.h): each index and value node is
// defined once, in the outermost scope where it can be, and is visible to the scopes inside it.
class ScopedEmitter {
 public:
  ScopedEmitter(const LoopNest& nest, std::vector<std::string> vars, const char* index_type);

  // Defines what `values` and `indices` need that is not defined yet; with outer_only, only the
  // nodes that do not read the reduced loop vars (and so can precede the loop over them).
  // `value_override` maps value ids to the expression that replaces them (a guarded Load keeps
  // its guard around it); a replaced value needs none of its operands.
  void define(const std::vector<int>& values, const std::vector<int>& indices, bool outer_only,
              const std::string& indent, std::string& out,
              const std::unordered_map<int, std::string>* value_override = nullptr);
  bool is_inner(int value) const { return inner_value_[value] != 0; }
  bool is_defined(int value) const { return defined_value_[value] != 0; }
  // Definitions made inside a loop go out of scope with it: save before, restore after.
  std::pair<std::vector<char>, std::vector<char>> save() const { return {defined_index_, defined_value_}; }
  void restore(std::pair<std::vector<char>, std::vector<char>> s) {
    defined_index_ = std::move(s.first);
    defined_value_ = std::move(s.second);
  }
  std::string index(int id) const;
  std::string store(const StoreStmt& s) const;  // the statement, with a newline
  // A column store's statement (kernel_ir.h): the value when `first` (a C condition) holds, else
  // the element combined with it.
  std::string column_store(const StoreStmt& s, const std::string& first) const;

  // When set (CUDA), a float division by a reciprocal calls vf_div_r_fast, which clears the bool
  // variable named here where its quotient may be inexact; fast_divisions counts those calls.
  std::string exact_flag;
  int fast_divisions = 0;

 private:
  const LoopNest& nest_;
  std::vector<std::string> vars_;
  const char* index_type_;
  std::vector<char> inner_value_, inner_index_, defined_index_, defined_value_;
  // A floating division inside the row loops by a value computed once per row takes that value's
  // reciprocal r<id>, defined with it, for a zero dividend (the prelude's vf_div_r: exact).
  std::vector<char> reciprocal_, divides_by_reciprocal_;
  std::vector<int> ready_;
};

// The target-specific parts of a reduction nest's per-row code.
struct ReductionRowHooks {
  // Emits a loop over the row's reduced elements around body(indent); defines the reduced vars.
  std::function<void(const std::function<void(const std::string&)>&)> inner_loop;
  std::function<void(int phase)> after_phase;  // after a phase's loop (CUDA: the team's combine)
  std::string row_guard;  // a condition around the row stores ("" for none)
  // A condition that a loop iteration is inside the row: its combines and stores happen only then
  // ("" when every iteration is).
  std::string element_guard;
  // When set, the loops combine reduction k into <group_accumulator>k, unguarded (inner_loop
  // declares it and folds it into acc<k>), instead of into acc<k> under element_guard.
  std::string group_accumulator;
  const std::unordered_map<int, std::string>* value_override = nullptr;  // for values in the loops
  // Maps a full-shape store (its index in nest.stores) to the statement that replaces it, unguarded.
  const std::unordered_map<int, std::string>* store_override = nullptr;
  // A serial nest: the C condition that the row is its chunk's first (column stores start there).
  std::string column_first;
};

// The code for one row of a reduction nest, at `indent` inside the row loop: per phase, the
// accumulators at their identities and a loop combining the phase's operands into them; then one
// loop storing the full-shape outputs, and the row stores.
void emit_reduction_row(const LoopNest& nest, ScopedEmitter& em, const ReductionRowHooks& hooks,
                        const std::string& indent, std::string& out);

// A reduction's identity and one combining step, as C expressions in its accumulator type.
std::string reduce_identity(const ReduceStmt& r);
std::string reduce_combine(const ReduceStmt& r, const std::string& acc, const std::string& x);

// A C condition that holds when index expression `id` is a multiple of m at the first point of
// every step, where loop var `last` is a multiple of m: parameters are tested at run time, other
// loop vars are unknown, products are multiples when a factor is, sums when both terms are.
// Memoized in `memo`, one entry per index node.
std::string multiple_at_steps(const LoopNest& nest, int id, int64_t last, int64_t m, std::vector<std::string>& memo);
// " & <test>": packs of v elements of the buffer in field `data`, at index expression `index`, are
// 16-byte aligned wherever loop var `var` is a multiple of v (the base pointer, and
// multiple_at_steps with `memo`).
std::string packs_aligned(const LoopNest& nest, DType dtype, int data, int index, int64_t var, int v,
                          std::vector<std::string>& memo);

// Nest n in the tiles of its schedule (emit_cuda_tiled.cpp).
void emit_tiled_nest(const LoopNest& nest, int n, const NestSchedule& schedule, const KernelAbi& abi, std::string& out);

// A reduction nest for CUDA (emit_cuda_reduction.cpp): a team of abi.nests[n].team threads a row,
// the row as schedule.reduction says.
void emit_cuda_reduction_nest(const LoopNest& nest, int n, const NestSchedule& schedule, const KernelAbi& abi,
                              std::string& out);

// CUDA: declares vf_divider <pre>dv<d> for 1 <= d < fields.size() from the Divider field fields[d]
// (NestSchedule::dividers), which the host computes at launch.
void emit_dividers(const std::vector<int>& fields, const std::string& pre, const std::string& indent, std::string& out);
// CUDA: statements that set vars[d] (d < rank, declared before) to the multi-index of flat
// position `flat` (an expression of type vf_index) over sizes[d], the innermost size being
// sizes[rank - 1] and the innermost index multiplied by `inner_scale`. With dividers (32-bit index
// math), divisions use the vf_divider <pre>dv<d> declared by emit_dividers. With row_tile = t >= 0
// (t < rank - 2), the low <pre>rl bits of dim t's index (an int declared before; sizes[t] a
// multiple of 1 << <pre>rl) vary right after the innermost index and its high part in its own
// place, divided by the vf_divider <pre>dvt (t > 0, with dividers).
void emit_unravel(const std::string& flat, const std::vector<std::string>& sizes, const std::vector<std::string>& vars,
                  const std::string& inner_scale, bool dividers, const std::string& pre, const std::string& indent,
                  std::string& out, int row_tile = -1);

// The sources of kernel `ir` under `schedule` (schedule_cpu.h, schedule_cuda.h), whose abi the
// argument struct declares.
std::string emit_cpp(const KernelIR& ir, const KernelSchedule& schedule, const std::string& entry);
std::string emit_cuda(const KernelIR& ir, const KernelSchedule& schedule, const std::string& entry);

}  // namespace vf
