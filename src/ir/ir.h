// The fusion IR: tensor and scalar values, the ops that define them, and the Fusion that owns both.
//
// Semantics
// ---------
// A Fusion is a straight-line program in SSA form. Its nodes are kept in a topological order (each
// node's inputs are fusion inputs, constants, or outputs of earlier nodes) and each value is defined
// once. Evaluation order beyond data dependences is unspecified.
//
// Values are tensors (a dtype and a concrete shape; zero-size dims are allowed anywhere) or scalars
// (weakly typed numbers, ScalarKind bool/int/float, either fusion inputs or literal constants).
// A tensor value is a mathematical array: the IR gives it no layout. Strides, offsets and whether a
// view op aliases its input are decided later (layout/view_algebra.h, analysis/alias_analysis.h).
//
// Ops follow Thunder's prims (ops.def lists them):
// - Elementwise ops take operands of one shape (broadcast_in_dim makes broadcasts explicit) and one
//   tensor dtype. Scalars are weak and take the tensor operands' dtype; a scalar of a stronger kind
//   than the tensors (a float with integer tensors) is an error. Comparisons, isfinite and signbit
//   give bool. frexp_mantissa and frexp_exponent (floating operands) are C's frexp: a = m * 2^e with
//   0.5 <= |m| < 1, e int32; zero, inf and NaN give m = a and e = 0.
// - float16 and bfloat16 arithmetic is computed in float32 and rounded to the dtype after each op,
//   as PyTorch eager does. Reductions of half types accumulate in float32.
// - Integer arithmetic wraps (two's complement). Integer div truncates toward zero; remainder takes
//   the sign of the divisor and fmod that of the dividend; integer div, remainder or fmod by zero
//   gives 0. Integer pow with a negative exponent gives 0 unless the base is 1 or -1.
// - bitwise_left_shift and bitwise_right_shift (integer dtypes) are torch's: a shift by a negative
//   amount or by the width or more gives 0 to the left and the sign (a >> (width - 1)) to the
//   right. nextafter takes f32 or f64; zeta (Hurwitz) is computed in double for every float dtype.
// - A cast from float to an integer type truncates toward zero, saturates to the int64 range
//   (NaN gives 0) and then wraps to the target width; a cast to bool tests != 0.
// - maximum, minimum, amax and amin propagate NaN.
// - Reductions remove the reduced dims. Over an empty extent they give the identity: sum 0, prod 1,
//   amax -inf (the lowest value for integer and bool dtypes), amin +inf (the highest). var divides
//   the sum of squared deviations by max(0, n - correction), so 0/0 gives NaN and x/0 gives inf.
// - Integer sum and prod wrap; var and var_mean take floating inputs only.
// - take(a, index, dim) replaces a's dim by index's elements (index is 0-D or 1-D):
//   out[..., j, ...] = a[..., index[j], ...]. take_along_axis(a, index, dim) and gather(a, index,
//   dim) give index's shape, out[p] = a[p with p[dim] = index[p]]; take_along_axis needs index's
//   other dims equal to a's, gather at most a's. Indices are integers in [0, a.shape[dim]); one
//   out of that range is a user error (kernels on the CPU report it; CUDA kernels give 0 for
//   that element and never read outside a).
// - scatter_add(a, index, src, dim): index and src have a's rank and dtype class (src a's dtype),
//   index's shape is at most src's in every dim and at most a's outside dim. For each position p of
//   index, src[p] is added to out[p with p[dim] = index[p]]. What lands on one element is summed
//   from 0 in the compute type (float32 for the half types; integers wrap), in row-major order of
//   p, then added to a's element and rounded to the dtype once. Indices outside [0, a.shape[dim])
//   are a user error (the reference and CPU kernels report it; CUDA kernels skip that element).
//   CPU kernels add in that order; CUDA kernels add with atomics in an unspecified order, so a
//   float sum may differ from the reference's in its last bits. bool is not accepted. Thunder's
//   index_add(a, index, value, dim) (index 1-D) is scatter_add with index broadcast along the
//   other dims of value.
// - scatter_max(a, index, src, dim): scatter_add's operands, integer dtypes only (not bool); each
//   element of the result is the largest of a's element and the src elements that land on it
//   (torch.scatter_reduce with "amax" and include_self). Order does not matter, so every backend
//   gives the reference's result exactly.
// - cumsum(a, dim): out[..., i, ...] = a[..., 0, ...] + ... + a[..., i, ...], summed in order from 0
//   in the compute type (float32 for the half types, int64 for integers, wrapping) and each
//   element rounded to a's dtype once. bool is not accepted (the trace reader converts it, and
//   narrow integers, to int64 first, as torch.cumsum does).
// - matmul(a, b) is torch.matmul of floating tensors of one dtype: 1-D a is [1, K] and 1-D b
//   [K, 1], with the added dim removed from the result; two 1-D operands give a 0-dim dot; the
//   last two dims multiply ([.., M, K] by [.., K, N]), the dims before them broadcast as in
//   elementwise ops. Each element sums its K products in order from 0 in float32 (float64 for
//   f64), rounded to the dtype once; K = 0 gives 0. matmul(a, b, bias) (b of rank 2 or more, bias
//   1-D of N elements and the operands' dtype) adds bias[n] to the sum of every element of column
//   n before that one rounding (torch's addmm and linear).
// - matmul_gelu(a, b[, bias]) gives (y, r): r is matmul(a, b[, bias]); y is the tanh gelu of the
//   same unrounded sum s, 0.5 * s * (1 + tanh(sqrt(2 / pi) * (s + 0.044715 * s^3))) computed in
//   float32 and rounded to the dtype once (f16, bf16 and f32 only). A rewrite makes it
//   (passes/fuse_matmul_epilogues.h); it is what a cuBLASLt GELU epilogue computes.
// - matmul_add(a, b, c[, bias]) is matmul(a, b[, bias]) with c (the result's shape and dtype)
//   added: each element's float32 sum (float64 for f64) plus c's element, then plus the bias, rounded
//   once (cuBLASLt's D = A B + C, then its bias epilogue). Made by the same pass from a residual add.
// - uniform_philox(shape, minval, maxval, dtype, seed, offset) is counter-based: the element at
//   row-major position i is minval + (maxval - minval) * u, computed in float32 (float64 for a
//   float64 result) and rounded to dtype, where u in [0, 1) comes from Philox4x32-10 with key
//   seed and counter (i / 4 as 64 bits, offset as 64 bits): word i % 4 of the block, its high 24
//   bits times 2^-24 (float64: words 2 (i % 2) and 2 (i % 2) + 1 of block i / 2, 53 bits times
//   2^-53). The same seed and offset give the same tensor on every backend and schedule.
// - Dims in attributes are canonical (0 <= d < rank) once a node is built; Fusion::add_node accepts
//   negative dims and wraps them as Python does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "base/dtype.h"
#include "base/scalar.h"

namespace vf {

// Concrete sizes. A named type so that symbolic sizes can replace it later.
using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[2, 8, 256]"

enum class OpKind : uint8_t {
#define VF_OP(name, prim, category) name,
#include "ir/ops.def"
#undef VF_OP
};

enum class OpCategory : uint8_t { View, Movement, Cast, Unary, Binary, Ternary, Reduction, Creation, Scatter, Scan, Contraction };

std::string_view op_name(OpKind op);  // the prim's name, "transpose"
OpCategory op_category(OpKind op);
const char* op_category_name(OpCategory c);  // "view", "movement", ..., "scatter"
std::optional<OpKind> op_from_name(std::string_view prim_name);
int op_num_outputs(OpKind op);  // 2 for var_mean and matmul_gelu, 1 otherwise
inline bool is_view_op(OpKind op) { return op_category(op) == OpCategory::View; }
inline bool is_elementwise(OpKind op) {
  OpCategory c = op_category(op);
  return c == OpCategory::Cast || c == OpCategory::Unary || c == OpCategory::Binary ||
         c == OpCategory::Ternary;
}

// ---- Attributes, one struct per shape of argument list ----
struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};
struct PermuteAttrs {  // transpose
  std::vector<int64_t> permutation;
  bool operator==(const PermuteAttrs&) const = default;
};
struct ReshapeAttrs {  // reshape; -1 is resolved when the node is built
  Shape shape;
  bool operator==(const ReshapeAttrs&) const = default;
};
struct BroadcastAttrs {  // broadcast_in_dim: input dim i becomes output dim broadcast_dims[i]
  Shape shape;
  std::vector<int64_t> broadcast_dims;
  bool operator==(const BroadcastAttrs&) const = default;
};
struct SliceAttrs {  // slice_prim: 0 <= start <= end <= size, step >= 1
  std::vector<int64_t> start, end, step;
  bool operator==(const SliceAttrs&) const = default;
};
struct DimsAttrs {  // squeeze, flip, sum, prod, amax, amin
  std::vector<int64_t> dims;
  bool operator==(const DimsAttrs&) const = default;
};
struct VarAttrs {  // var, var_mean
  std::vector<int64_t> dims;
  double correction = 1;
  bool operator==(const VarAttrs&) const = default;
};
struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;  // lo and hi may be negative; interior >= 0
  bool operator==(const PadDim&) const = default;
};
struct PadAttrs {  // pad; the padding value is the node's second input (a scalar)
  std::vector<PadDim> config;
  bool operator==(const PadAttrs&) const = default;
};
struct AxisAttrs {  // cat, take, take_along_axis, gather: the dim they work along
  int64_t dim = 0;
  bool operator==(const AxisAttrs&) const = default;
};
struct CastAttrs {  // convert_element_type
  DType dtype = DType::Float32;
  bool operator==(const CastAttrs&) const = default;
};
struct FullAttrs {
  Shape shape;
  Scalar value;
  DType dtype = DType::Float32;
  bool operator==(const FullAttrs&) const = default;
};
struct IotaAttrs {
  int64_t length = 0, start = 0, step = 1;
  DType dtype = DType::Int64;
  bool operator==(const IotaAttrs&) const = default;
};
struct UniformAttrs {  // uniform_philox; the seed and offset are the node's inputs (int scalars)
  Shape shape;
  double minval = 0, maxval = 1;
  DType dtype = DType::Float32;
  bool operator==(const UniformAttrs&) const = default;
};

using OpAttrs = std::variant<NoAttrs, PermuteAttrs, ReshapeAttrs, BroadcastAttrs, SliceAttrs,
                             DimsAttrs, VarAttrs, PadAttrs, AxisAttrs, CastAttrs, FullAttrs,
                             IotaAttrs, UniformAttrs>;

struct Node;

struct Value {
  int id = 0;
  std::string name;
  bool is_tensor = true;
  DType dtype = DType::Float32;   // tensors
  Shape shape;                    // tensors
  ScalarKind scalar_kind = ScalarKind::Float;  // scalars
  std::optional<Scalar> constant;  // literal scalars
  Node* producer = nullptr;        // null for fusion inputs and constants
  std::vector<Node*> uses;         // nodes reading this value, in program order, once per node

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  int64_t nbytes() const { return numel() * dtype_size(dtype); }
  bool is_scalar() const { return !is_tensor; }
  bool is_constant() const { return constant.has_value(); }
  std::string type_string() const;  // "f32[2, 8, 256]" or "float"
};

struct Node {
  int id = 0;
  OpKind op = OpKind::Add;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  OpAttrs attrs;
  int line = 0;  // source line in the trace it was read from, 0 if none

  template <typename T>
  const T& attr() const {
    return std::get<T>(attrs);
  }
  Value* output() const { return outputs.at(0); }
};

// Where a contraction's optional operands sit among its inputs, -1 where it has none: matmul_add's
// addend c (input 2) and the bias (after the operands). The reference, the planner and the
// library call read them through this.
struct ContractionSlots {
  int addend = -1, bias = -1;
};
ContractionSlots contraction_slots(const Node& n);

// The type a node gives one of its results.
struct ValueType {
  bool is_tensor = true;
  DType dtype = DType::Float32;
  Shape shape;
  ScalarKind scalar_kind = ScalarKind::Float;
};

class Fusion {
 public:
  Fusion() = default;
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;
  Fusion(Fusion&&) = default;
  Fusion& operator=(Fusion&&) = default;

  Value* add_tensor_input(std::string name, DType dtype, Shape shape);
  Value* add_scalar_input(std::string name, ScalarKind kind);
  Value* add_constant(Scalar value);

  // Appends a node after checking its arguments and inferring its results' types (ir/infer_types.h).
  // Throws UserError naming the op and its arguments when they are wrong. Attributes are
  // canonicalised (negative dims wrapped, reshape's -1 resolved). Names default to fresh "tN".
  const std::vector<Value*>& add_node(OpKind op, std::vector<Value*> inputs, OpAttrs attrs = NoAttrs{},
                                      std::vector<std::string> output_names = {}, int line = 0);
  Value* add(OpKind op, std::vector<Value*> inputs, OpAttrs attrs = NoAttrs{}) {
    return add_node(op, std::move(inputs), std::move(attrs)).at(0);
  }
  void add_output(Value* value);

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  Value* find(std::string_view name) const;  // null if absent
  bool is_input(const Value* v) const;
  bool is_output(const Value* v) const;

 private:
  Value* new_value(std::string name);
  std::string unique_name(std::string wanted);

  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, Value*> by_name_;
  int next_fresh_ = 0;
};

// Whether v is made by a full of +0 (a float -0.0 is not).
bool is_zero_full(const Value* v);

}  // namespace vf
