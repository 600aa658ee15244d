// The kernel IR: integer index expressions, value expressions and loop nests with stores.
//
// A kernel is a list of loop nests. Each nest iterates over the shape of one group of outputs
// (its extents are run-time parameters) and, per point, evaluates value expressions and stores
// some of them into output buffers. Expressions live in per-nest arenas and are hash-consed, so a
// value used twice is one node, computed once per iteration. Arena order is a topological order.
//
// Index expressions are int64 arithmetic (C semantics on in-range values): loop variables,
// constants, parameters of the argument block, + - * / % min, comparisons and `and`, select.
// Value expressions carry a dtype and hold its compute type (float for the half types, which are
// kept rounded to the half type after every op, as eager PyTorch does); loads may be guarded by
// a predicate, in which case they read nothing and give 0 when it is false (a pad's or cat's
// range test; or a where's condition when it compares loop indices, as a causal mask does: the
// operand the condition discards is not read).
//
// A reduction nest iterates rows: its `extents` are the row dims (loop vars 0..r-1) and its
// `inner_extents` the reduced dims (loop vars r..r+k-1), shared by every reduction in it. Per row,
// the reductions run in phases: a phase is one loop over the reduced dims that accumulates every
// reduction whose operand needs only the results of earlier phases; a `Reduced` value reads a
// reduction's result after its phase. Then one more loop over the reduced dims performs the
// stores of full-shape outputs, and the row stores (outputs of the row shape) come last. Values
// that do not depend on the reduced loop vars are computed once per row.
//
// A serial nest (`serial`) walks its last row dim in order within one team (the rows that one
// team, or one CPU work item, takes: a chunk), and may have column stores: stores that combine
// their value over the serial dim into one element per point of the other row dims and the
// reduced dims, each chunk's partial result of a reduction over the rows (a bias gradient's sum
// over the batch, beside the row reductions of a norm's backward). The chunk's first row
// initialises the element.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/scalar.h"
#include "codegen/kernel_abi.h"
#include "ir/ir.h"

namespace vf {

// How a buffer dim's stride is baked into the source: 0 (term dropped), 1 (no multiply), or a
// run-time parameter.
enum class StrideClass : uint8_t { Zero = 0, One = 1, Any = 2 };
StrideClass stride_class(int64_t stride);

// Gathered: the int64 value of value node `value` (an integer tensor's element: the index a take or
// gather reads), checked against the bound `a` (an index node): the kernel reports an index outside
// [0, bound) through the IndexError field `b` (a Param node; the CPU backend's; CUDA kernels ignore
// it) as gather number `c` (a Const node, KernelAbi::gathers), and its loads are guarded by the
// range test, so such an element reads nothing and gives 0. An index node that reads a Gathered
// node is value-dependent: emitters write it inline where it is used, after the value, never as a
// definition before the values.
enum class IndexOp : uint8_t { Var, Const, Param, Add, Sub, Mul, Div, Mod, Min, Lt, Ge, Eq, And, Select, Gathered };

struct IndexExpr {
  IndexOp op = IndexOp::Const;
  int64_t value = 0;  // Var: loop dim; Const: the value; Param: field id; Gathered: value node id
  int a = -1, b = -1, c = -1;  // operands (Select: c ? a : b is written select(a=cond, b, c))
  bool dynamic = false;        // reads a Gathered node (set by LoopNest::index)
  bool operator==(const IndexExpr&) const = default;
};

enum class ValueOp : uint8_t {
  Load,      // param = data field, index = element offset, pred = guard (-1: none)
  Scalar,    // param = ScalarF64/ScalarI64 field, converted to dtype
  Constant,  // constant converted to dtype
  Iota,      // iota_start + index * iota_step in int64, converted to dtype
  Uniform,   // uniform_philox's u in [0, 1) at row-major position index, seed args[0], offset args[1]
             // (int64 values); dtype float32 or float64 (ir.h states the generator)
  Apply,     // fn applied to args (operands of operand_dtype), result in dtype
  Cast,      // args[0] from operand_dtype to dtype
  Select,    // pred ? args[0] : args[1]
  Reduced,   // the result of reduction `param` of the nest (rounded to dtype), after its phase
  Scanned,   // a scan nest's running sum of args[0] along walk_dim, this point's included, in dtype
  // Made by rewrites of the lowered IR (fold_tanh_gelu.h), float and double only:
  OnePlusTanh,       // 1 + tanh(args[0]) (fn Add) or 1 - tanh(args[0]) (fn Sub), as 2 / (1 + exp(-2u))
  HalfXOnePlusTanh,  // 0.5 * args[0] * (1 + tanh(args[1])), as x / (1 + exp(-2u))
};

struct ValueExpr {
  ValueOp op = ValueOp::Constant;
  DType dtype = DType::Float32;
  DType operand_dtype = DType::Float32;
  OpKind fn = OpKind::Add;
  int param = -1, param2 = -1, index = -1, pred = -1;
  int flat_offset = -1;  // Load in a flat nest: the offset field (element = offset + flat index)
  int unit_var = -1;     // Load: the loop dim whose step moves the address by one element, if any
  // Load: the loop dim whose step moves the address by one whole run of unit_var (the next row of
  // the buffer's row-major rows), if any. From the layouts the kernel is generated for; it only
  // orders the CUDA row-vector schedule's steps (emit_cuda.cpp, row_tile_dim).
  int row_var = -1;
  // Load with pred: the address is valid where pred is false too (a where's operand that its
  // condition discards), so a pack holding such elements may be read whole.
  bool pred_in_bounds = false;
  Scalar constant;
  int64_t iota_start = 0, iota_step = 1;
  std::vector<int> args;
  bool operator==(const ValueExpr&) const = default;
};

// A load whose address is valid at every point of the nest: unguarded, or guarded only to say
// whether its value is used (pred_in_bounds). Packs of such loads may be read whole.
inline bool load_in_bounds(const ValueExpr& e) { return e.op == ValueOp::Load && (e.pred < 0 || e.pred_in_bounds); }

struct StoreStmt {
  int param = -1;  // OutputData field
  DType dtype = DType::Float32;
  int index = -1;  // element offset
  int value = -1;
  int flat_offset = -1;  // in a flat nest: the offset field
  bool row = false;      // a reduction nest's row store (index uses only the row vars)
  // A serial nest's column store (index uses the row vars but the serial one, and the reduced
  // vars): element = value at the chunk's first row, then combine(element, value) with `op`
  // (Sum, Prod, Amax or Amin) at each later row; dtype is the accumulator's.
  bool column = false;
  OpKind op = OpKind::Sum;
  // A scatter nest's store: element += value (op Sum; CUDA: an atomic add) or element =
  // max(element, value) (op Amax; CUDA: an atomic max), where pred (an index node, -1: always)
  // holds; index may name one element at many points.
  bool accumulate = false;
  int pred = -1;
};

// One reduction of a reduction nest: combines `value` (an expression over the row and reduced
// vars, of the accumulator's dtype) over the reduced dims, starting from the identity of `op`.
struct ReduceStmt {
  OpKind op = OpKind::Sum;        // Sum, Prod, Amax or Amin
  DType acc_dtype = DType::Float32;  // Float32 for half types, Int64 for integers
  int value = -1;
  int phase = 0;  // set by LoopNest::assign_phases
};

struct LoopNest {
  std::vector<int> extents;        // one param (OutputSize field) per loop dim (row dims of a reduction nest)
  std::vector<int> inner_extents;  // a reduction nest's reduced dims (params), after the row dims
  bool serial = false;             // a reduction nest whose last row dim one team walks in order
  std::vector<ReduceStmt> reductions;  // empty for a pointwise nest
  // A scatter nest: a pointwise nest over a scatter's index whose stores accumulate into an output
  // that the launch fills with the base first (KernelAbi::filled_outputs). The CPU walks its points in order in
  // one work item; CUDA threads take points in any order and add with atomics.
  bool scatter = false;
  // A scatter nest: the loop var along which its stores may meet; a scan nest: the var it scans.
  int walk_dim = -1;
  // A scatter nest whose adds must come in the index's row-major order on every backend
  // (PlanOptions::deterministic_scatters): on CUDA a thread per position of the other vars walks
  // walk_dim in order (NestKind::Walk).
  bool in_order = false;
  // A scan nest: a pointwise nest over a scan's result whose Scanned values run along walk_dim.
  // Each line (a position of the other vars) is walked in order by one thread (CUDA) or within one
  // work item (CPU: a work item per line), its Scanned accumulators starting at 0.
  bool scan = false;
  // Every load and store is unguarded and contiguous in the nest's row-major order, so element
  // k of the flattened space is at offset + k in every buffer: emitted without index math.
  bool flat = true;
  std::vector<IndexExpr> indices;
  std::vector<ValueExpr> values;
  std::vector<StoreStmt> stores;

  int index(const IndexExpr& e);  // hash-consed, with folding of + 0, * 1, * 0
  int value(const ValueExpr& e);  // hash-consed
  // Replaces value `id` by `e`, whose operands precede it (a rewrite of the lowered nest).
  void replace_value(int id, const ValueExpr& e);
  // The Gathered node of int64 value `value` checked against `bound`, gather number `gather`,
  // errors reported through field `error_field`.
  int gathered(int value, int bound, int error_field, int gather);
  int var(int64_t dim) { return index({IndexOp::Var, dim}); }
  int constant(int64_t v) { return index({IndexOp::Const, v}); }
  int param(int field) { return index({IndexOp::Param, field}); }
  int binary(IndexOp op, int a, int b) { return index({op, 0, a, b}); }

  bool is_reduction() const { return !reductions.empty() || serial; }
  // Whether index id reads a loop var >= first_var (for a reduction nest: a reduced var), directly
  // or through the value of a Gathered node.
  bool index_uses_vars_from(int id, int64_t first_var) const;
  bool index_uses_var(int id, int64_t var) const;  // whether index id reads loop var `var`
  // The value nodes that Gathered nodes under index id read.
  void gathered_values(int id, std::vector<int>& out) const;
  // Per value: whether it reads a reduced loop var, and the number of reduction phases that must
  // complete before it can be computed.
  void scope_of_values(std::vector<char>& inner, std::vector<int>& ready) const;
  // Sets each ReduceStmt::phase (the phases its operand waits for); returns the phase count.
  int assign_phases();
  // After assign_phases: the phase count (0 without reductions), and the operands of one phase's
  // reductions.
  int phase_count() const;
  std::vector<int> phase_operands(int phase) const;
  // The value nodes `values` need (themselves, their operands and the values their gathered
  // indices read, transitively), as flags.
  std::vector<char> needed_values(const std::vector<int>& values) const;

 private:
  struct Hash {
    size_t operator()(const IndexExpr& e) const;
    size_t operator()(const ValueExpr& e) const;
  };
  std::unordered_map<IndexExpr, int, Hash> index_ids_;
  std::unordered_map<ValueExpr, int, Hash> value_ids_;
};

// How an index expression of a nest depends on one loop var: not at all, as `invariant + var`
// (Unit: one step of the var moves the address by one element), or otherwise. One entry per
// index node of `nest`.
enum class VarUse : uint8_t { Invariant, Unit, Other, Grouped };
std::vector<VarUse> var_uses(const LoopNest& nest, int64_t var);

// The same over aligned groups of `group` consecutive values of `var` (var = g * group + j, j <
// group): Unit means index(g * group + j) = index(g * group) + j, Grouped constant within each
// group, Invariant independent of var. Division and remainder of var itself by a known constant
// (a literal or a Constant field of `fields`) that `group` divides are Grouped and Unit: a reshape
// that splits the var. A bound test (var plus or minus such multiples < or >= such a multiple) is
// Grouped: the range predicate of a cat or pad whose boundaries fall between groups.
std::vector<VarUse> group_var_uses(const LoopNest& nest, int64_t var, int64_t group, const std::vector<AbiField>& fields);
// Whether index expression id is affine in loop var `var`: the var enters through + and - and
// products with var-free factors only (so a step of the var moves it by a fixed amount).
bool affine_in_var(const LoopNest& nest, int id, int64_t var);
// The Constant fields that var is divided by (or taken the remainder of) in index expression id.
std::vector<int> var_divisors(const LoopNest& nest, int id, int64_t var);

// The index expression equal to bool value `value` of nest when it compares int64 loop indices
// (iotas from 0 by 1) and constants below 2^30 in magnitude, as a causal mask does, so that it
// cannot overflow 32-bit index math; -1 otherwise. index_not(cond) is cond == 0.
int index_condition(LoopNest& nest, int value);
int index_not(LoopNest& nest, int cond);

// A parameter field of abi, deduplicated by (kind, a, b); Constant fields by (a, b) with its value.
int abi_field(KernelAbi& abi, AbiFieldKind kind, int32_t a, int32_t b = 0, int64_t value = 0);

struct KernelIR {
  KernelAbi abi;  // fields are the parameters (ids index abi.fields); offsets set by finalize
  std::vector<LoopNest> nests;

  int field(AbiFieldKind kind, int32_t a, int32_t b = 0, int64_t value = 0) { return abi_field(abi, kind, a, b, value); }
};

// Sets each field's type (index fields I32 when index32) and byte offset, abi.size and abi.align.
void finalize_abi(KernelAbi& abi, bool index32);

}  // namespace vf
