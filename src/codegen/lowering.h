// The kernel lowering's state and steps, shared by lower_kernel.cpp (pointwise nests, view and
// movement ops) and lower_reduction.cpp (reduction nests). Internal to src/codegen.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "codegen/lower_kernel.h"
#include "layout/layout.h"

namespace vf {

// A value that is an input buffer seen through a chain of pure view ops.
struct ViewOf {
  int input = 0;
  std::vector<const Node*> steps;  // empty: the input itself
  Layout layout;
};

// Slots of Constant fields (AbiField::b): a reduction nest's row and reduced extents (slot + dim);
// from kWideConstantSlot on, constants never narrowed to 32 bits (finalize_abi: var's element
// count, used in value math).
inline constexpr int32_t kRowSlot = 100, kInnerSlot = 200, kWideConstantSlot = 1000;

class KernelLowering;

// The index algebra of layout/index_map.h over the index expressions of the nest being lowered:
// an Index or a Pred is an index-expression id, and always() is -1 (no predicate).
class NestIndices {
 public:
  using Index = int;
  using Pred = int;
  explicit NestIndices(KernelLowering& lowering) : l_(lowering) {}
  Index literal(int64_t v);
  Index constant(const Node& n, int slot, int64_t v);
  Index add(Index a, Index b) { return binary(IndexOp::Add, a, b); }
  Index sub(Index a, Index b) { return binary(IndexOp::Sub, a, b); }
  Index mul(Index a, Index b) { return binary(IndexOp::Mul, a, b); }
  Index div(Index a, Index b) { return binary(IndexOp::Div, a, b); }
  Index mod(Index a, Index b) { return binary(IndexOp::Mod, a, b); }
  Pred always() const { return -1; }
  Pred ge(Index a, Index b) { return binary(IndexOp::Ge, a, b); }
  Pred lt(Index a, Index b) { return binary(IndexOp::Lt, a, b); }
  Pred eq(Index a, Index b) { return binary(IndexOp::Eq, a, b); }
  Pred both(Pred a, Pred b);
  // The loop vars of a split loop dim (KernelLowering::loop_space) whose linearisation is `flat`.
  std::optional<std::vector<Index>> unflattened(Index flat, std::span<const int64_t> sizes);
  // The linearisation of a split loop dim's vars, when `indices` are those vars.
  std::optional<Index> flattened(std::span<const Index> indices, std::span<const int64_t> sizes);

 private:
  int binary(IndexOp op, int a, int b);
  KernelLowering& l_;
};

// Lowers one KernelSpec (lower_kernel): walks each output's expression backward from the output.
class KernelLowering {
 public:
  explicit KernelLowering(const KernelSpec& spec) : spec_(spec), fusion_(*spec.fusion) {}

  LoweredKernel run();

 private:
  // Forward: which values are pure views of an input buffer, with their composed layouts.
  void find_views();
  // One pointwise nest over the shape shared by outputs `outs`.
  void lower_group(const std::vector<int>& outs);
  void clear_flat_offsets();

  // The loop dims of a pointwise nest over the shape of output `out`, and the index of each of
  // its dims. An output dim that a reshape in the segment builds by merging input dims
  // ([.., 32, 128] -> [.., 4096]) is split into loop dims of those sizes, so that the load through
  // the reshape uses the loop vars where it would otherwise divide the merged index.
  std::vector<int> loop_space(int out);

  int add(int a, int b) { return nest_->binary(IndexOp::Add, a, b); }
  int sub(int a, int b) { return nest_->binary(IndexOp::Sub, a, b); }
  int mul(int a, int b) { return nest_->binary(IndexOp::Mul, a, b); }
  int land(int a, int b) { return a < 0 ? b : b < 0 ? a : nest_->binary(IndexOp::And, a, b); }
  int constant_field(const Node& n, int slot, int64_t v);
  // Index i times a stride of class c: dropped, as is, or times the stride field (kind, buffer, d).
  int scaled(int i, StrideClass c, AbiFieldKind kind, int buffer, int64_t d);
  int input_index(const Value* v) const;
  // The index registered in linear_ as the row-major linearisation of loop vars `run`, if any.
  std::optional<int> linear_of(const std::vector<int64_t>& run) const;
  // The index of a value of `shape` at the point idx of a space of shape `space` whose dim d has
  // size size_of(d) (an index expression), when `shape` merges adjacent dims of `space` (or adds
  // or drops dims of size 1): each merged dim's row-major linearisation, registered in linear_
  // when its parts are loop vars or known linearisations. nullopt when `shape` splits a dim.
  std::optional<std::vector<int>> index_merging(const Shape& shape, const Shape& space, const std::vector<int>& idx,
                                                const std::function<int(size_t)>& size_of);

  // A scalar operand (constant or scalar input) converted to dtype.
  int scalar(const Value* v, DType dtype);

  // An elementwise operand. Weak scalars are converted to the compute type (float, unrounded,
  // for the half types), as the reference does.
  int operand(const Value* v, const std::vector<int>& idx, int pred, DType dtype);

  // A load of `view` at idx under pred: its address, stride classes, flat offset, unit and row vars.
  int load(const Value* v, const ViewOf& view, const std::vector<int>& idx, int pred, bool pred_in_bounds = false);
  int select(int pred, int a, int b, DType dtype);

  // The value of tensor v at index idx (one index expression per dim of v); loads are guarded
  // by pred (-1: unguarded).
  int visit(const Value* v, const std::vector<int>& idx, int pred);

  // A reduction nest (lower_reduction.cpp).
  void lower_reduction_nest(const Node& first);
  // A scatter nest (lower_scatter.cpp): the segment's one output is scatter_add n's result.
  void lower_scatter_nest(const Node& n);
  // A scan nest (lower_scan.cpp): the segment's one output is cumsum n's result.
  void lower_scan_nest(const Node& n);
  // Stores output o at idx: `value`, or (-1) the output's own value there.
  void store_output(int o, const std::vector<int>& idx, bool row, int value = -1);
  void store_column(int o, const Node& n, const std::vector<int>& idx);
  void store_padded(int o, const std::vector<int>& full_idx, int64_t dim);
  int reduce(OpKind op, DType acc_dtype, int value, DType result_dtype);
  int lower_reduction(const Node& n, const Value* out, const std::vector<int>& idx, int pred);
  int lower_node(const Node& n, const Value* out, const std::vector<int>& idx, int pred);
  int lower_cat(const Node& n, const std::vector<int>& idx, int pred);
  int lower_gather(const Node& n, const std::vector<int>& idx, int pred);
  int lower_uniform(const Node& n, const std::vector<int>& idx);
  int zero(DType dtype);  // the constant 0 of dtype
  int constant(DType dtype, Scalar value);  // value converted to dtype
  int cast(int v, DType from, DType to);    // v converted (v itself when from == to)
  int apply(OpKind fn, DType dtype, std::vector<int> args);  // fn of operands of dtype, a dtype result
  // Records why one kernel cannot compute the segment (the first reason found is kept) and gives
  // a placeholder value; lowering stops there (visit lowers nothing more).
  int unsupported(std::string problem);
  LoweredKernel finish();

  friend class NestIndices;

  const KernelSpec& spec_;
  const Fusion& fusion_;
  KernelIR ir_;
  LoopNest* nest_ = nullptr;
  NestIndices ix_{*this};  // the view and movement ops' index maps build into nest_
  std::unordered_map<const Value*, ViewOf> views_;
  std::unordered_map<const Value*, int> view_ids_;
  std::vector<int> stride_view_;  // per view: the view whose stride fields it reads (itself or earlier)
  std::map<std::tuple<const Value*, std::vector<int>, int>, int> memo_;
  std::vector<int32_t> flat_inputs_, flat_views_, flat_outputs_;  // of the current nest
  // Of the current pointwise nest (loop_space): the loop vars whose row-major linearisation an
  // index id is, and each loop var's extent in the spec.
  std::unordered_map<int, std::vector<int64_t>> linear_;
  std::vector<int64_t> loop_sizes_;
  Shape inner_sizes_;  // a reduction nest's reduced extents
  int inner_count_ = -1;  // value: their product, as a Float64 (var's element count)
  std::string problem_;   // why one kernel cannot compute the segment ("" while it can)
};

}  // namespace vf
