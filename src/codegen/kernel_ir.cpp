// Hash-consing of kernel IR expressions and the layout of the argument block.
#include "codegen/kernel_ir.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "base/error.h"

namespace vf {
namespace {

size_t mix(size_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

}  // namespace

StrideClass stride_class(int64_t stride) {
  return stride == 0 ? StrideClass::Zero : stride == 1 ? StrideClass::One : StrideClass::Any;
}

size_t LoopNest::Hash::operator()(const IndexExpr& e) const {
  size_t h = static_cast<size_t>(e.op);
  h = mix(h, static_cast<uint64_t>(e.value));
  h = mix(h, static_cast<uint64_t>(e.a));
  h = mix(h, static_cast<uint64_t>(e.b));
  return mix(h, static_cast<uint64_t>(e.c));
}

size_t LoopNest::Hash::operator()(const ValueExpr& e) const {
  size_t h = static_cast<size_t>(e.op);
  h = mix(h, static_cast<uint64_t>(e.dtype) * 131 + static_cast<uint64_t>(e.operand_dtype));
  h = mix(h, static_cast<uint64_t>(e.fn));
  h = mix(h, static_cast<uint64_t>(e.param));
  h = mix(h, static_cast<uint64_t>(e.param2));
  h = mix(h, static_cast<uint64_t>(e.index));
  h = mix(h, static_cast<uint64_t>(e.pred));
  h = mix(h, static_cast<uint64_t>(e.flat_offset));
  h = mix(h, static_cast<uint64_t>(e.unit_var));
  h = mix(h, static_cast<uint64_t>(e.row_var));
  h = mix(h, static_cast<uint64_t>(e.constant.i));
  h = mix(h, static_cast<uint64_t>(e.iota_start) * 31 + static_cast<uint64_t>(e.iota_step));
  for (int a : e.args) h = mix(h, static_cast<uint64_t>(a));
  return h;
}

int LoopNest::index(const IndexExpr& expr) {
  IndexExpr e = expr;
  auto dynamic = [&](int id) { return id >= 0 && indices[id].dynamic; };
  e.dynamic = e.op == IndexOp::Gathered || dynamic(e.a) || dynamic(e.b) || dynamic(e.c);
  auto is_const = [&](int id, int64_t v) {
    return id >= 0 && indices[id].op == IndexOp::Const && indices[id].value == v;
  };
  switch (e.op) {
    case IndexOp::Add:
      if (is_const(e.a, 0)) return e.b;
      if (is_const(e.b, 0)) return e.a;
      break;
    case IndexOp::Sub:
      if (is_const(e.b, 0)) return e.a;
      break;
    case IndexOp::Mul:
      if (is_const(e.a, 1)) return e.b;
      if (is_const(e.b, 1)) return e.a;
      if (is_const(e.a, 0) || is_const(e.b, 0)) return constant(0);
      break;
    case IndexOp::And:
      if (is_const(e.a, 1)) return e.b;
      if (is_const(e.b, 1)) return e.a;
      break;
    default:
      break;
  }
  auto it = index_ids_.find(e);
  if (it != index_ids_.end()) return it->second;
  const int id = static_cast<int>(indices.size());
  indices.push_back(e);
  index_ids_.emplace(e, id);
  return id;
}

int LoopNest::value(const ValueExpr& e) {
  auto it = value_ids_.find(e);
  if (it != value_ids_.end()) return it->second;
  const int id = static_cast<int>(values.size());
  values.push_back(e);
  value_ids_.emplace(e, id);
  return id;
}

int LoopNest::gathered(int value, int bound, int error_field, int gather) {
  VF_INTERNAL_CHECK(value >= 0 && value < static_cast<int>(values.size()) && is_integral(values[value].dtype),
                    "a gathered index must be an integer value node, got v", value);
  return index({IndexOp::Gathered, value, bound, param(error_field), constant(gather)});
}

void LoopNest::replace_value(int id, const ValueExpr& e) {
  for (int a : e.args) VF_INTERNAL_CHECK(a >= 0 && a < id, "replace_value: v", id, " reads v", a);
  const auto it = value_ids_.find(values[id]);
  if (it != value_ids_.end() && it->second == id) value_ids_.erase(it);
  values[id] = e;
  value_ids_.emplace(e, id);  // a node equal to e already keeps its own id
}

namespace {

// Whether index node id of nest reads a loop var in [first, last], through Gathered nodes too.
// Memoized per value node: values are shared, and a gathered index is rare.
class VarReader {
 public:
  VarReader(const LoopNest& nest, int64_t first, int64_t last)
      : nest_(nest), first_(first), last_(last), value_memo_(nest.values.size(), -1) {}

  bool index(int id) {
    if (id < 0) return false;
    const IndexExpr& e = nest_.indices[static_cast<size_t>(id)];
    switch (e.op) {
      case IndexOp::Var: return e.value >= first_ && e.value <= last_;
      case IndexOp::Const: case IndexOp::Param: return false;
      case IndexOp::Gathered: return value(static_cast<int>(e.value)) || index(e.a);
      default: return index(e.a) || index(e.b) || index(e.c);
    }
  }

 private:
  bool value(int id) {
    signed char& memo = value_memo_[static_cast<size_t>(id)];
    if (memo >= 0) return memo;
    const ValueExpr& e = nest_.values[static_cast<size_t>(id)];
    // A reduction's result is one per row: it reads the row vars.
    bool reads = e.op == ValueOp::Reduced ? first_ < static_cast<int64_t>(nest_.extents.size()) : false;
    reads = reads || index(e.index) || index(e.pred);
    for (int a : e.args) reads = reads || value(a);
    memo = reads;
    return reads;
  }

  const LoopNest& nest_;
  int64_t first_, last_;
  std::vector<signed char> value_memo_;
};

}  // namespace

bool LoopNest::index_uses_var(int id, int64_t var) const {
  if (id < 0) return false;
  const IndexExpr& e = indices[static_cast<size_t>(id)];
  switch (e.op) {
    case IndexOp::Var: return e.value == var;
    case IndexOp::Const: case IndexOp::Param: return false;
    default:
      if (e.dynamic) return VarReader(*this, var, var).index(id);
      return index_uses_var(e.a, var) || index_uses_var(e.b, var) || index_uses_var(e.c, var);
  }
}

bool LoopNest::index_uses_vars_from(int id, int64_t first_var) const {
  if (id < 0) return false;
  const IndexExpr& e = indices[id];
  switch (e.op) {
    case IndexOp::Var: return e.value >= first_var;
    case IndexOp::Const: case IndexOp::Param: return false;
    default:
      if (e.dynamic) return VarReader(*this, first_var, INT64_MAX).index(id);
      return index_uses_vars_from(e.a, first_var) || index_uses_vars_from(e.b, first_var) ||
             index_uses_vars_from(e.c, first_var);
  }
}

void LoopNest::gathered_values(int id, std::vector<int>& out) const {
  if (id < 0 || !indices[static_cast<size_t>(id)].dynamic) return;
  const IndexExpr& e = indices[static_cast<size_t>(id)];
  if (e.op == IndexOp::Gathered && std::find(out.begin(), out.end(), e.value) == out.end())
    out.push_back(static_cast<int>(e.value));
  gathered_values(e.a, out);
  gathered_values(e.b, out);
  gathered_values(e.c, out);
}

void LoopNest::scope_of_values(std::vector<char>& inner, std::vector<int>& ready) const {
  const auto row_rank = static_cast<int64_t>(extents.size());
  std::vector<char> inner_index(indices.size(), 0);
  for (size_t id = 0; id < indices.size(); ++id) {  // arena order is topological
    const IndexExpr& e = indices[id];
    if (e.op == IndexOp::Var)
      inner_index[id] = e.value >= row_rank;
    else if (e.op != IndexOp::Const && e.op != IndexOp::Param)
      inner_index[id] = (e.a >= 0 && inner_index[e.a]) || (e.b >= 0 && inner_index[e.b]) || (e.c >= 0 && inner_index[e.c]);
  }
  inner.assign(values.size(), 0);
  ready.assign(values.size(), 0);
  std::vector<int> gathered;
  for (size_t id = 0; id < values.size(); ++id) {  // a reduction's operand precedes its Reduced value
    const ValueExpr& e = values[id];
    char in = (e.index >= 0 && inner_index[e.index]) || (e.pred >= 0 && inner_index[e.pred]);
    int r = 0;
    // The values a gathered index reads precede the nodes that read it.
    gathered.clear();
    gathered_values(e.index, gathered);
    gathered_values(e.pred, gathered);
    for (int g : gathered) {
      in = in || inner[g];
      r = std::max(r, ready[g]);
    }
    for (int a : e.args) {
      in = in || inner[a];
      r = std::max(r, ready[a]);
    }
    if (e.op == ValueOp::Reduced) {
      const int operand = reductions.at(e.param).value;
      VF_INTERNAL_CHECK(operand < static_cast<int>(id), "reduction ", e.param, " operand v", operand,
                        " follows its result v", id);
      r = ready[operand] + 1;
    }
    inner[id] = in;
    ready[id] = r;
  }
}

bool affine_in_var(const LoopNest& nest, int id, int64_t var) {
  if (id < 0) return true;
  const IndexExpr& e = nest.indices[static_cast<size_t>(id)];
  const auto uses = [&](int x) { return nest.index_uses_var(x, var); };
  switch (e.op) {
    case IndexOp::Var: case IndexOp::Const: case IndexOp::Param: return true;
    case IndexOp::Gathered: return !uses(id);
    case IndexOp::Add: case IndexOp::Sub: return affine_in_var(nest, e.a, var) && affine_in_var(nest, e.b, var);
    case IndexOp::Mul: return !(uses(e.a) && uses(e.b)) && affine_in_var(nest, e.a, var) && affine_in_var(nest, e.b, var);
    default: return !uses(e.a) && !uses(e.b) && !uses(e.c);
  }
}

int LoopNest::assign_phases() {
  std::vector<char> inner;
  std::vector<int> ready;
  scope_of_values(inner, ready);
  int phases = 0;
  for (ReduceStmt& red : reductions) {
    red.phase = ready[red.value];
    phases = std::max(phases, red.phase + 1);
  }
  return phases;
}

int LoopNest::phase_count() const {
  int phases = 0;
  for (const ReduceStmt& r : reductions) phases = std::max(phases, r.phase + 1);
  return phases;
}

std::vector<int> LoopNest::phase_operands(int phase) const {
  std::vector<int> ids;
  for (const ReduceStmt& r : reductions)
    if (r.phase == phase) ids.push_back(r.value);
  return ids;
}

std::vector<char> LoopNest::needed_values(const std::vector<int>& roots) const {
  std::vector<char> need(values.size(), 0);
  std::vector<int> stack = roots;
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (need[id]) continue;
    need[id] = 1;
    for (int a : values[id].args) stack.push_back(a);
    gathered_values(values[id].index, stack);
    gathered_values(values[id].pred, stack);
  }
  return need;
}

namespace {

// An int64 value of nest as an index expression: a loop index (an iota from 0 by 1) or a constant
// below 2^30 in magnitude; -1 otherwise.
int integer_index(LoopNest& nest, int id) {
  const ValueExpr& e = nest.values[id];
  if (e.dtype != DType::Int64) return -1;
  if (e.op == ValueOp::Iota && e.iota_start == 0 && e.iota_step == 1) return e.index;
  constexpr int64_t kLimit = int64_t{1} << 30;
  if (e.op == ValueOp::Constant && e.constant.kind == ScalarKind::Int && e.constant.i > -kLimit && e.constant.i < kLimit)
    return nest.constant(e.constant.i);
  return -1;
}

}  // namespace

int index_not(LoopNest& nest, int cond) { return nest.binary(IndexOp::Eq, cond, nest.constant(0)); }

int index_condition(LoopNest& nest, int value) {
  const ValueExpr& e = nest.values[value];  // the index ops below add indices, not values
  if (e.op != ValueOp::Apply || e.args.size() != 2 || e.operand_dtype != DType::Int64) return -1;
  const int a = integer_index(nest, e.args[0]), b = integer_index(nest, e.args[1]);
  if (a < 0 || b < 0) return -1;
  switch (e.fn) {
    case OpKind::Lt: return nest.binary(IndexOp::Lt, a, b);
    case OpKind::Gt: return nest.binary(IndexOp::Lt, b, a);
    case OpKind::Ge: return nest.binary(IndexOp::Ge, a, b);
    case OpKind::Le: return nest.binary(IndexOp::Ge, b, a);
    case OpKind::Eq: return nest.binary(IndexOp::Eq, a, b);
    case OpKind::Ne: return index_not(nest, nest.binary(IndexOp::Eq, a, b));
    default: return -1;
  }
}

int abi_field(KernelAbi& abi, AbiFieldKind kind, int32_t a, int32_t b, int64_t value) {
  for (size_t i = 0; i < abi.fields.size(); ++i) {
    const AbiField& f = abi.fields[i];
    if (f.kind == kind && f.a == a && f.b == b) return static_cast<int>(i);
  }
  AbiField f;
  f.kind = kind;
  f.a = a;
  f.b = b;
  f.value = value;
  abi.fields.push_back(f);
  return static_cast<int>(abi.fields.size()) - 1;
}

int64_t abi_field_size(AbiFieldType type) {
  switch (type) {
    case AbiFieldType::Ptr: return 8;
    case AbiFieldType::I64: return 8;
    case AbiFieldType::I32: return 4;
    case AbiFieldType::F64: return 8;
  }
  return 8;
}

std::vector<VarUse> var_uses(const LoopNest& nest, int64_t var) {
  std::vector<VarUse> use(nest.indices.size(), VarUse::Invariant);
  auto of = [&](int id) { return id < 0 ? VarUse::Invariant : use[id]; };
  for (size_t id = 0; id < nest.indices.size(); ++id) {  // arena order is topological
    const IndexExpr& e = nest.indices[id];
    const VarUse a = of(e.a), b = of(e.b), c = of(e.c);
    switch (e.op) {
      case IndexOp::Var: use[id] = e.value == var ? VarUse::Unit : VarUse::Invariant; break;
      case IndexOp::Const: case IndexOp::Param: use[id] = VarUse::Invariant; break;
      case IndexOp::Add:
        use[id] = a == VarUse::Invariant ? b : b == VarUse::Invariant ? a : VarUse::Other;
        break;
      case IndexOp::Sub:
        use[id] = b == VarUse::Invariant ? a : VarUse::Other;
        break;
      case IndexOp::Gathered:  // a loaded value: never moved in packs, even where it is invariant
        use[id] = VarUse::Other;
        break;
      default:
        use[id] = a == VarUse::Invariant && b == VarUse::Invariant && c == VarUse::Invariant ? VarUse::Invariant
                                                                                             : VarUse::Other;
        break;
    }
  }
  return use;
}

std::vector<VarUse> group_var_uses(const LoopNest& nest, int64_t var, int64_t group, const std::vector<AbiField>& fields) {
  using U = VarUse;
  std::vector<U> use(nest.indices.size(), U::Invariant);
  auto of = [&](int id) { return id < 0 ? U::Invariant : use[id]; };
  auto is_var = [&](int id) { return id >= 0 && nest.indices[id].op == IndexOp::Var && nest.indices[id].value == var; };
  // The value of index id when it is known here: a literal, or a Constant field's value.
  auto known = [&](int id) -> std::optional<int64_t> {
    if (id < 0) return std::nullopt;
    const IndexExpr& e = nest.indices[id];
    if (e.op == IndexOp::Const) return e.value;
    if (e.op != IndexOp::Param) return std::nullopt;
    const AbiField& f = fields.at(static_cast<size_t>(e.value));
    return f.kind == AbiFieldKind::Constant ? std::optional<int64_t>(f.value) : std::nullopt;
  };
  auto multiple = [&](int id) { return known(id).has_value() && *known(id) % group == 0; };
  auto group_divides = [&](int id) { return multiple(id) && *known(id) > 0; };  // a divisor splitting var
  // aligned[id]: the index is var plus or minus known multiples of group, so each aligned group
  // of var lies on one side of a bound that is such a multiple.
  std::vector<char> aligned(nest.indices.size(), 0);
  auto is_aligned = [&](int id) { return id >= 0 && aligned[id]; };
  auto fixed = [](U u) { return u == U::Invariant || u == U::Grouped; };
  auto join = [](U a, U b) { return a == U::Grouped || b == U::Grouped ? U::Grouped : U::Invariant; };
  for (size_t id = 0; id < nest.indices.size(); ++id) {  // arena order is topological
    const IndexExpr& e = nest.indices[id];
    const U a = of(e.a), b = of(e.b), c = of(e.c);
    U u = U::Other;
    switch (e.op) {
      case IndexOp::Var:
        u = e.value == var ? U::Unit : U::Invariant;
        aligned[id] = e.value == var;
        break;
      case IndexOp::Const: case IndexOp::Param: u = U::Invariant; break;
      case IndexOp::Add:
        if (fixed(a) && fixed(b)) u = join(a, b);
        else if ((a == U::Unit && fixed(b)) || (fixed(a) && b == U::Unit)) u = U::Unit;
        aligned[id] = (is_aligned(e.a) && multiple(e.b)) || (multiple(e.a) && is_aligned(e.b));
        break;
      case IndexOp::Sub:
        if (fixed(a) && fixed(b)) u = join(a, b);
        else if (a == U::Unit && fixed(b)) u = U::Unit;
        aligned[id] = is_aligned(e.a) && multiple(e.b);
        break;
      case IndexOp::Lt: case IndexOp::Ge:  // a cat's or pad's range test: one answer per group
        // x < c and x >= c split the values of x at c; c < x and c >= x split them at c + 1.
        if (fixed(a) && fixed(b)) u = join(a, b);
        else if (is_aligned(e.a) && multiple(e.b)) u = U::Grouped;
        break;
      case IndexOp::Mul:
        if (fixed(a) && fixed(b)) u = join(a, b);
        break;
      case IndexOp::Div:
        if (fixed(a) && b == U::Invariant) u = a;
        else if (is_var(e.a) && group_divides(e.b)) u = U::Grouped;
        break;
      case IndexOp::Mod:
        if (fixed(a) && b == U::Invariant) u = a;
        else if (is_var(e.a) && group_divides(e.b)) u = U::Unit;
        break;
      case IndexOp::Gathered:  // a loaded value (Other)
        break;
      default:
        if (fixed(a) && fixed(b) && fixed(c)) u = join(join(a, b), c);
        break;
    }
    use[id] = u;
  }
  return use;
}

std::vector<int> var_divisors(const LoopNest& nest, int id, int64_t var) {
  std::vector<int> out;
  std::vector<int> stack{id};
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    if (k < 0) continue;
    const IndexExpr& e = nest.indices[k];
    if ((e.op == IndexOp::Div || e.op == IndexOp::Mod) && e.a >= 0 && nest.indices[e.a].op == IndexOp::Var &&
        nest.indices[e.a].value == var && e.b >= 0 && nest.indices[e.b].op == IndexOp::Param) {
      const int field = static_cast<int>(nest.indices[e.b].value);
      if (std::find(out.begin(), out.end(), field) == out.end()) out.push_back(field);
    }
    stack.push_back(e.a);
    stack.push_back(e.b);
    stack.push_back(e.c);
  }
  return out;
}

void finalize_abi(KernelAbi& abi, bool index32) {
  abi.index32 = index32;
  for (AbiField& f : abi.fields) {
    switch (f.kind) {
      case AbiFieldKind::InputData:
      case AbiFieldKind::OutputData:
      case AbiFieldKind::IndexError:
        f.type = AbiFieldType::Ptr;
        break;
      case AbiFieldKind::ScalarF64:
        f.type = AbiFieldType::F64;
        break;
      case AbiFieldKind::ScalarI64: case AbiFieldKind::Divider:
        f.type = AbiFieldType::I64;
        break;
      case AbiFieldKind::Constant:
        // b >= 1000 marks a constant used in int64 value math (iota), never narrowed.
        f.type = index32 && f.b < 1000 ? AbiFieldType::I32 : AbiFieldType::I64;
        break;
      case AbiFieldKind::InputSize: case AbiFieldKind::InputStride: case AbiFieldKind::InputOffset:
      case AbiFieldKind::OutputSize: case AbiFieldKind::OutputStride: case AbiFieldKind::OutputOffset:
      case AbiFieldKind::ViewStride: case AbiFieldKind::ViewOffset:
        f.type = index32 ? AbiFieldType::I32 : AbiFieldType::I64;
        break;
    }
  }
  // Place 8-byte fields first, then 4-byte ones, each group in field order.
  std::vector<size_t> order(abi.fields.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return abi_field_size(abi.fields[x].type) > abi_field_size(abi.fields[y].type);
  });
  uint32_t offset = 0;
  for (size_t k : order) {
    abi.fields[k].offset = offset;
    offset += static_cast<uint32_t>(abi_field_size(abi.fields[k].type));
  }
  abi.align = 8;
  abi.size = std::max<uint32_t>(8, (offset + 7) / 8 * 8);
}

}  // namespace vf
