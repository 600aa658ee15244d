// The random fusion generator: picks ops whose arguments fit the values built so far, keeping
// operations whose result may differ by rounding between backends away from discontinuous ops.
#include "random_fusion.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "base/error.h"
#include "reference/random_inputs.h"
#include "runtime/repro.h"

namespace vf::fuzz {
namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
template <typename T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

const std::vector<DType> kDTypes = {DType::Float32, DType::Float32, DType::Float32, DType::Float16,
                                    DType::BFloat16, DType::Float64, DType::Int32, DType::Int64,
                                    DType::Int8, DType::UInt8, DType::Bool};

// Ops whose result is bitwise reproducible from bitwise equal operands on every backend (no
// rounding that differs with evaluation order, contraction or the math library). Only such
// "exact" values feed discontinuous ops (comparisons, rounding, casts to integers) and ops with
// singularities, so that a backend's last-bit difference never turns into a large one.
// Sin and cos are not smooth in this sense: of a large inexact argument (a variance of values near
// 1e3, say) the last-bit difference is a large absolute one, and their result is arbitrary.
bool smooth_unary(OpKind op) {
  switch (op) {
    case OpKind::Neg: case OpKind::Abs: case OpKind::Tanh: case OpKind::Atan: case OpKind::Erf:
    case OpKind::Exp:
      return true;
    default:
      return false;
  }
}
bool exact_unary(OpKind op) {  // on exact operands
  switch (op) {
    case OpKind::Neg: case OpKind::Abs: case OpKind::Sign: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::Round: case OpKind::Trunc: case OpKind::IsFinite: case OpKind::BitwiseNot:
    case OpKind::Signbit:
      return true;
    default:
      return false;
  }
}
bool smooth_binary(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Maximum ||
         op == OpKind::Minimum;
}
bool exact_binary(OpKind op) {  // for floating operands that are exact
  switch (op) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Maximum: case OpKind::Minimum: case OpKind::Eq:
    case OpKind::Ne: case OpKind::Lt: case OpKind::Le: case OpKind::Gt: case OpKind::Ge:
      return true;
    default:
      return false;
  }
}

// Whether a float cast from `from` to `to` gains mantissa bits (bf16 < f16 < f32 < f64). An
// inexact value cast so is compared with the tighter tolerance of `to` although it carries the
// rounding of `from`, so the generator casts only exact values that way.
bool gains_precision(DType from, DType to) {
  return is_floating(from) && is_floating(to) && mantissa_bits(to) > mantissa_bits(from);
}

std::vector<OpKind> ops_of(OpCategory category) {
  std::vector<OpKind> ops;
#define VF_OP(name, prim, cat) \
  if (OpCategory::cat == category) ops.push_back(OpKind::name);
#include "ir/ops.def"
#undef VF_OP
  return ops;
}

struct GenValue {
  Value* value;
  bool exact;
};

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& options) : rng_(seed), options_(options) {
    program_.seed = seed;
    fusion_ = std::make_shared<Fusion>();
  }

  FuzzProgram run() {
    const int num_inputs = static_cast<int>(uniform(rng_, 1, options_.max_inputs));
    Shape base = options_.long_rows ? long_shape() : random_shape();
    for (int i = 0; i < num_inputs; ++i) add_input(i == 0 || chance(rng_, 0.6) ? base : related_shape(base), i);
    const int num_ops = static_cast<int>(uniform(rng_, 1, options_.max_ops));
    for (int attempts = 0; static_cast<int>(program_.ops.size()) < num_ops && attempts < num_ops * 8; ++attempts)
      try_random_op();
    choose_outputs();
    return program_;
  }

 private:
  Shape random_shape() {
    const int rank = static_cast<int>(uniform(rng_, 0, options_.max_rank));
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(random_size());
    return s;
  }
  Shape long_shape() {
    static const std::vector<int64_t> kLong = {36864, 40960, 65536};
    Shape s{pick(rng_, kLong)};
    if (chance(rng_, 0.5)) s.insert(s.begin() + uniform(rng_, 0, 1), uniform(rng_, 1, 3));
    return s;
  }
  int64_t random_size() {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.04) return 0;
    if (r < 0.22) return 1;
    if (r < 0.27) return uniform(rng_, 17, 40);  // large enough that kernels split over threads
    return uniform(rng_, 2, options_.max_dim);
  }
  // A shape that broadcasts to base (some dims 1), or a sub-shape, or a fresh one.
  Shape related_shape(const Shape& base) {
    Shape s = base;
    if (chance(rng_, 0.5)) {
      for (int64_t& d : s)
        if (chance(rng_, 0.4)) d = 1;
      return s;
    }
    if (!s.empty() && chance(rng_, 0.5)) {
      s.erase(s.begin() + uniform(rng_, 0, static_cast<int64_t>(s.size()) - 1));
      return s;
    }
    return random_shape();
  }

  void add_input(const Shape& shape, int i) {
    FuzzInput in;
    in.name = std::string(1, static_cast<char>('a' + i));
    in.dtype = chance(rng_, 0.5) ? DType::Float32 : pick(rng_, kDTypes);
    in.shape = shape;
    const int rank = static_cast<int>(shape.size());
    LayoutRecipe& r = in.recipe;
    r.order.resize(rank);
    std::iota(r.order.begin(), r.order.end(), 0);
    if (chance(rng_, 0.5)) std::shuffle(r.order.begin(), r.order.end(), rng_);
    const bool strided = chance(rng_, 0.4);
    for (int d = 0; d < rank; ++d) {
      r.gap.push_back(strided && chance(rng_, 0.5) ? static_cast<int>(uniform(rng_, 1, 3)) : 0);
      r.expanded.push_back(chance(rng_, 0.1));
      r.one_stride.push_back(chance(rng_, 0.5) ? uniform(rng_, 0, 9) : 1);
    }
    r.offset = chance(rng_, 0.3) ? uniform(rng_, 1, 7) : 0;
    program_.inputs.push_back(in);
    Value* v = fusion_->add_tensor_input(in.name, in.dtype, in.shape);
    values_.push_back({v, true});
  }

  // Appends the op when its arguments fit; returns the index of its first result or -1.
  int append(OpKind op, std::vector<FuzzOperand> operands, OpAttrs attrs, bool exact) {
    std::vector<Value*> inputs;
    for (const FuzzOperand& o : operands)
      inputs.push_back(o.value >= 0 ? values_[o.value].value : fusion_->add_constant(o.literal));
    try {
      const std::vector<Value*>& outs = fusion_->add_node(op, inputs, attrs);
      const int first = static_cast<int>(values_.size());
      for (Value* v : outs) values_.push_back({v, exact || !is_floating(v->dtype)});
      program_.ops.push_back({op, std::move(operands), std::move(attrs)});
      return first;
    } catch (const UserError&) {
      return -1;
    }
  }

  // A recent value more often than an old one.
  int pick_value() {
    const int n = static_cast<int>(values_.size());
    if (chance(rng_, 0.6)) return static_cast<int>(uniform(rng_, std::max(0, n - 3), n - 1));
    return static_cast<int>(uniform(rng_, 0, n - 1));
  }
  const Value& val(int i) const { return *values_[i].value; }
  bool exact(int i) const { return values_[i].exact; }

  // A value of `shape` and `dtype` made from some existing value (found, broadcast, cast), or -1.
  int operand_like(const Shape& shape, DType dtype, bool want_exact) {
    std::vector<int> same;
    for (int i = 0; i < static_cast<int>(values_.size()); ++i)
      if (val(i).shape == shape && (!want_exact || exact(i) || !is_floating(val(i).dtype))) same.push_back(i);
    int v = -1;
    if (!same.empty() && chance(rng_, 0.7)) {
      v = pick(rng_, same);
    } else {
      // Broadcast a lower-rank value into the shape.
      const int src = pick_value();
      const Shape& s = val(src).shape;
      if (s.size() <= shape.size() && (!want_exact || exact(src))) {
        std::vector<int64_t> dims;
        bool ok = true;
        size_t d = shape.size() - s.size();  // align trailing dims
        for (size_t i = 0; i < s.size(); ++i, ++d) {
          if (s[i] != 1 && s[i] != shape[d]) ok = false;
          dims.push_back(static_cast<int64_t>(d));
        }
        if (ok) v = append(OpKind::BroadcastInDim, {{src, {}}}, BroadcastAttrs{shape, dims}, exact(src));
      }
      if (v < 0 && !same.empty()) v = pick(rng_, same);
    }
    if (v < 0) return -1;
    if (val(v).dtype != dtype) {
      if (!exact(v) && gains_precision(val(v).dtype, dtype)) return -1;
      v = append(OpKind::ConvertElementType, {{v, {}}}, CastAttrs{dtype}, exact(v));
    }
    return v;
  }

  Scalar literal_for(DType dtype) {
    if (is_bool(dtype)) return Scalar::from_bool(chance(rng_, 0.5));
    if (is_floating(dtype) && chance(rng_, 0.7)) {
      static const std::vector<double> kFloats = {0.5, -1.25, 2.0, 3.0, 1e-3, 0.0};
      return Scalar::from_float(pick(rng_, kFloats));
    }
    return Scalar::from_int(uniform(rng_, -3, 3));
  }

  void try_random_op() {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    const int a = pick_value();
    if (r < 0.16) unary(a);
    else if (r < 0.32) binary(a);
    else if (r < 0.37) cast(a);
    else if (r < 0.42) where(a);
    else if (r < 0.50) reshape(a);
    else if (r < 0.56) transpose(a);
    else if (r < 0.63) slice(a);
    else if (r < 0.66) squeeze(a);
    else if (r < 0.71) broadcast(a);
    else if (r < 0.77) pad(a);
    else if (r < 0.83) cat(a);
    else if (r < 0.87) flip(a);
    else if (options_.reductions) reduction(a);
  }

  void unary(int a) {
    static const std::vector<OpKind> kAll = ops_of(OpCategory::Unary);
    std::vector<OpKind> choices;
    const bool ex = exact(a) || !is_floating(val(a).dtype);
    for (OpKind op : kAll)
      if (ex || smooth_unary(op)) choices.push_back(op);
    const OpKind op = pick(rng_, choices);
    append(op, {{a, {}}}, NoAttrs{}, ex && exact_unary(op));
  }

  void binary(int a) {
    static const std::vector<OpKind> kAll = ops_of(OpCategory::Binary);
    const bool ex = exact(a) || !is_floating(val(a).dtype);
    std::vector<OpKind> choices;
    for (OpKind op : kAll)
      if (ex || smooth_binary(op)) choices.push_back(op);
    const OpKind op = pick(rng_, choices);
    const bool need_exact = !smooth_binary(op);
    FuzzOperand other;
    bool other_exact = true;
    if (chance(rng_, 0.25)) {
      other.literal = literal_for(val(a).dtype);
    } else {
      other.value = operand_like(val(a).shape, val(a).dtype, need_exact);
      if (other.value < 0) return;
      other_exact = exact(other.value);
    }
    std::vector<FuzzOperand> operands = {{a, {}}, other};
    if (chance(rng_, 0.3)) std::swap(operands[0], operands[1]);
    append(op, operands, NoAttrs{}, ex && other_exact && exact_binary(op));
  }

  void cast(int a) {
    DType to = pick(rng_, kDTypes);
    const DType from = val(a).dtype;
    // Float to integer or bool is discontinuous: only from exact values.
    if (is_floating(from) && !is_floating(to) && !exact(a)) to = DType::Float32;
    if (!exact(a) && gains_precision(from, to)) return;
    // A correctly rounded (or truncating) conversion of an exact value is exact.
    append(OpKind::ConvertElementType, {{a, {}}}, CastAttrs{to}, exact(a));
  }

  void where(int a) {
    const Shape& shape = val(a).shape;
    // A bool condition of the same shape: an existing one, or a comparison of an exact value.
    int cond = operand_like(shape, DType::Bool, true);
    if (cond < 0) return;
    FuzzOperand other;
    bool other_exact = true;
    if (chance(rng_, 0.3)) {
      other.literal = literal_for(val(a).dtype);
    } else {
      other.value = operand_like(shape, val(a).dtype, false);
      if (other.value < 0) return;
      other_exact = exact(other.value);
    }
    std::vector<FuzzOperand> ops = {{cond, {}}, {a, {}}, other};
    if (chance(rng_, 0.5)) std::swap(ops[1], ops[2]);
    append(OpKind::Where, ops, NoAttrs{}, exact(a) && other_exact);
  }

  void reshape(int a) {
    Shape s = val(a).shape;
    // A few random merges of adjacent dims, splits into factors and inserted or removed 1s.
    const int steps = static_cast<int>(uniform(rng_, 1, 3));
    for (int k = 0; k < steps; ++k) {
      const int choice = static_cast<int>(uniform(rng_, 0, 3));
      if (choice == 0 && s.size() >= 2) {
        const size_t i = static_cast<size_t>(uniform(rng_, 0, static_cast<int64_t>(s.size()) - 2));
        s[i] *= s[i + 1];
        s.erase(s.begin() + static_cast<int64_t>(i) + 1);
      } else if (choice == 1 && !s.empty()) {
        const size_t i = static_cast<size_t>(uniform(rng_, 0, static_cast<int64_t>(s.size()) - 1));
        std::vector<int64_t> factors;
        for (int64_t f = 2; f < s[i]; ++f)
          if (s[i] % f == 0) factors.push_back(f);
        if (factors.empty()) continue;
        const int64_t f = pick(rng_, factors);
        const int64_t rest = s[i] / f;
        s[i] = f;
        s.insert(s.begin() + static_cast<int64_t>(i) + 1, rest);
      } else if (choice == 2) {
        s.insert(s.begin() + uniform(rng_, 0, static_cast<int64_t>(s.size())), 1);
      } else if (!s.empty()) {
        const size_t i = static_cast<size_t>(uniform(rng_, 0, static_cast<int64_t>(s.size()) - 1));
        if (s[i] == 1) s.erase(s.begin() + static_cast<int64_t>(i));
      }
    }
    if (static_cast<int>(s.size()) > options_.max_rank + 1) return;
    append(OpKind::Reshape, {{a, {}}}, ReshapeAttrs{s}, exact(a));
  }

  void transpose(int a) {
    std::vector<int64_t> perm(val(a).shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    append(OpKind::Transpose, {{a, {}}}, PermuteAttrs{perm}, exact(a));
  }

  void slice(int a) {
    const Shape& s = val(a).shape;
    SliceAttrs attrs;
    for (int64_t n : s) {
      int64_t start = chance(rng_, 0.5) ? 0 : uniform(rng_, 0, n);
      int64_t end = chance(rng_, 0.5) ? n : uniform(rng_, start, n);
      attrs.start.push_back(start);
      attrs.end.push_back(end);
      attrs.step.push_back(chance(rng_, 0.5) ? 1 : uniform(rng_, 2, 3));
    }
    append(OpKind::SlicePrim, {{a, {}}}, attrs, exact(a));
  }

  void squeeze(int a) {
    const Shape& s = val(a).shape;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] == 1 && (dims.empty() || chance(rng_, 0.6))) dims.push_back(static_cast<int64_t>(d));
    if (dims.empty()) return;
    append(OpKind::Squeeze, {{a, {}}}, DimsAttrs{dims}, exact(a));
  }

  void broadcast(int a) {
    const Shape& s = val(a).shape;
    const int extra = static_cast<int>(uniform(rng_, 0, 2));
    const int out_rank = static_cast<int>(s.size()) + extra;
    if (out_rank > options_.max_rank + 1) return;
    // Choose which output dims hold the input dims (increasing).
    std::vector<int64_t> all(out_rank);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    std::vector<int64_t> dims(all.begin(), all.begin() + static_cast<int64_t>(s.size()));
    std::sort(dims.begin(), dims.end());
    Shape out(out_rank, 0);
    for (int64_t& d : out) d = chance(rng_, 0.3) ? 1 : uniform(rng_, 2, 4);
    for (size_t i = 0; i < s.size(); ++i) out[dims[i]] = s[i] == 1 && chance(rng_, 0.6) ? uniform(rng_, 1, 5) : s[i];
    append(OpKind::BroadcastInDim, {{a, {}}}, BroadcastAttrs{out, dims}, exact(a));
  }

  void pad(int a) {
    const Shape& s = val(a).shape;
    PadAttrs attrs;
    for (int64_t n : s) {
      PadDim p;
      p.interior = chance(rng_, 0.3) ? uniform(rng_, 1, 2) : 0;
      const int64_t dilated = n + std::max<int64_t>(0, n - 1) * p.interior;
      p.lo = chance(rng_, 0.3) ? -uniform(rng_, 0, dilated) : uniform(rng_, 0, 2);
      const int64_t left = dilated + p.lo;
      p.hi = chance(rng_, 0.3) ? -uniform(rng_, 0, std::max<int64_t>(0, left)) : uniform(rng_, 0, 2);
      attrs.config.push_back(p);
    }
    append(OpKind::Pad, {{a, {}}, {-1, literal_for(val(a).dtype)}}, attrs, exact(a));
  }

  void cat(int a) {
    const Shape& s = val(a).shape;
    if (s.empty()) return;
    const int64_t dim = uniform(rng_, 0, static_cast<int64_t>(s.size()) - 1);
    std::vector<FuzzOperand> operands = {{a, {}}};
    bool ex = exact(a);
    const int more = static_cast<int>(uniform(rng_, 1, 2));
    for (int k = 0; k < more; ++k) {
      // A slice of a along dim (sometimes empty), or a value of matching shape.
      int v = -1;
      for (int i = 0; i < static_cast<int>(values_.size()) && chance(rng_, 0.5); ++i) {
        const Value& c = val(i);
        if (c.dtype != val(a).dtype || c.shape.size() != s.size()) continue;
        bool fits = true;
        for (size_t d = 0; d < s.size(); ++d)
          if (static_cast<int64_t>(d) != dim && c.shape[d] != s[d]) fits = false;
        if (fits) v = i;
      }
      if (v < 0) {
        SliceAttrs attrs;
        for (size_t d = 0; d < s.size(); ++d) {
          const bool here = static_cast<int64_t>(d) == dim;
          const int64_t start = here ? uniform(rng_, 0, s[d]) : 0;
          const int64_t end = here ? (chance(rng_, 0.25) ? start : uniform(rng_, start, s[d])) : s[d];
          attrs.start.push_back(start);
          attrs.end.push_back(end);
          attrs.step.push_back(1);
        }
        v = append(OpKind::SlicePrim, {{a, {}}}, attrs, exact(a));
        if (v < 0) return;
      }
      ex = ex && exact(v);
      operands.push_back({v, {}});
    }
    std::shuffle(operands.begin(), operands.end(), rng_);
    append(OpKind::Cat, operands, AxisAttrs{dim}, ex);
  }

  void flip(int a) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < val(a).shape.size(); ++d)
      if (chance(rng_, 0.5)) dims.push_back(static_cast<int64_t>(d));
    append(OpKind::Flip, {{a, {}}}, DimsAttrs{dims}, exact(a));
  }

  void reduction(int a) {
    const Value& v = val(a);
    std::vector<int64_t> dims;
    for (size_t d = 0; d < v.shape.size(); ++d)
      if (chance(rng_, 0.5)) dims.push_back(static_cast<int64_t>(d));
    if (dims.empty() && !v.shape.empty()) dims.push_back(uniform(rng_, 0, static_cast<int64_t>(v.shape.size()) - 1));
    static const std::vector<OpKind> kOps = {OpKind::Sum, OpKind::Sum, OpKind::Prod, OpKind::Amax, OpKind::Amin,
                                             OpKind::Var, OpKind::VarMean};
    OpKind op = pick(rng_, kOps);
    // prod of many values overflows or underflows at rounding-dependent points: keep it short.
    if (op == OpKind::Prod) {
      int64_t n = 1;
      for (int64_t d : dims) n *= v.shape[d];
      if (n > 16) op = OpKind::Sum;
    }
    if (op == OpKind::Var || op == OpKind::VarMean)
      append(op, {{a, {}}}, VarAttrs{dims, static_cast<double>(uniform(rng_, 0, 1))}, false);
    else
      append(op, {{a, {}}}, DimsAttrs{dims}, (op == OpKind::Amax || op == OpKind::Amin) && exact(a));
  }

  void choose_outputs() {
    const int n = program_.num_values();
    const int first_result = static_cast<int>(program_.inputs.size());
    std::vector<int> outs = {n - 1};
    const int more = static_cast<int>(uniform(rng_, 0, 2));
    for (int k = 0; k < more; ++k) {
      // Mostly op results; rarely an input returned as it is.
      const int lo = chance(rng_, 0.1) || n == first_result ? 0 : first_result;
      const int v = static_cast<int>(uniform(rng_, lo, n - 1));
      if (std::find(outs.begin(), outs.end(), v) == outs.end()) outs.push_back(v);
    }
    program_.outputs = outs;
  }

  Rng rng_;
  GeneratorOptions options_;
  FuzzProgram program_;
  std::shared_ptr<Fusion> fusion_;
  std::vector<GenValue> values_;
};

}  // namespace

int FuzzProgram::num_values() const {
  int n = static_cast<int>(inputs.size());
  for (const FuzzOp& op : ops) n += op_num_outputs(op.op);
  return n;
}

FuzzProgram generate_program(uint64_t seed, const GeneratorOptions& options) {
  return Generator(seed, options).run();
}

Layout input_layout(const FuzzInput& input) {
  const LayoutRecipe& r = input.recipe;
  const size_t rank = input.shape.size();
  Layout l;
  l.sizes = input.shape;
  l.strides.assign(rank, 0);
  l.offset = r.offset;
  int64_t running = 1;
  for (size_t k = rank; k-- > 0;) {  // innermost physical dim first
    const size_t d = static_cast<size_t>(r.order.at(k));
    const int64_t n = input.shape[d];
    if (n == 1) {
      l.strides[d] = r.one_stride.at(d);
    } else if (r.expanded.at(d)) {
      l.strides[d] = 0;
    } else {
      l.strides[d] = running;
      running *= n + r.gap.at(d);
    }
  }
  return l;
}

std::shared_ptr<Fusion> build_fusion(const FuzzProgram& program) {
  auto fusion = std::make_shared<Fusion>();
  std::vector<Value*> values;
  for (const FuzzInput& in : program.inputs) values.push_back(fusion->add_tensor_input(in.name, in.dtype, in.shape));
  for (const FuzzOp& op : program.ops) {
    std::vector<Value*> inputs;
    for (const FuzzOperand& o : op.operands) {
      VF_USER_CHECK(o.value < static_cast<int>(values.size()), "fuzz program: operand ", o.value,
                    " is not defined before prims.", op_name(op.op));
      inputs.push_back(o.value >= 0 ? values[o.value] : fusion->add_constant(o.literal));
    }
    for (Value* v : fusion->add_node(op.op, inputs, op.attrs)) values.push_back(v);
  }
  VF_USER_CHECK(!program.outputs.empty(), "fuzz program: no outputs");
  for (int o : program.outputs) {
    VF_USER_CHECK(o >= 0 && o < static_cast<int>(values.size()), "fuzz program: output ", o, " is not defined");
    fusion->add_output(values[o]);
  }
  return fusion;
}

HostTensor input_tensor(DType dtype, const Layout& layout, uint64_t seed, size_t index) {
  const int64_t extent = std::max<int64_t>(layout.storage_extent(), 1);
  HostTensor flat = random_tensor(dtype, {extent}, seed * 131 + index);
  return HostTensor::view_of(dtype, layout, flat.storage());
}

std::vector<HostArg> make_inputs(const FuzzProgram& program) {
  std::vector<HostArg> args;
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const FuzzInput& in = program.inputs[i];
    args.push_back(input_tensor(in.dtype, input_layout(in), program.seed, i));
  }
  return args;
}

std::string program_text(const FuzzProgram& program, const std::string& note) {
  std::shared_ptr<Fusion> fusion = build_fusion(program);
  std::vector<Layout> layouts;
  for (const FuzzInput& in : program.inputs) layouts.push_back(input_layout(in));
  return format_repro(*fusion, layouts, note, program.seed);
}

}  // namespace vf::fuzz
