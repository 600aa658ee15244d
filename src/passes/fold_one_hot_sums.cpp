#include "passes/fold_one_hot_sums.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "base/error.h"

namespace vf {
namespace {

bool is_zero_constant(const Value* v) {
  return v->is_constant() && v->constant->as_double() == 0.0;
}

// Whether v is iota(n), start 0 and step 1, broadcast along dim d of a shape whose dim d is n.
bool is_iota_along(const Value* v, int64_t d) {
  const Node* b = v->producer;
  if (!b || b->op != OpKind::BroadcastInDim || b->attr<BroadcastAttrs>().broadcast_dims != std::vector<int64_t>{d})
    return false;
  const Node* iota = b->inputs[0]->producer;
  if (!iota || iota->op != OpKind::Iota) return false;
  const IotaAttrs& a = iota->attr<IotaAttrs>();
  return a.start == 0 && a.step == 1 && a.length == v->shape[d];
}

// Whether values do not vary along dim d: scalars, full, broadcasts that map no dim onto d, and
// elementwise ops of those. Remembers its answers: elementwise graphs share operands.
class InvariantAlong {
 public:
  explicit InvariantAlong(int64_t d) : d_(d) {}

  bool operator()(const Value* v) {
    if (!v->is_tensor) return true;
    if (auto it = known_.find(v); it != known_.end()) return it->second;
    const Node* p = v->producer;
    bool invariant = false;
    if (p && p->op == OpKind::Full) {
      invariant = true;
    } else if (p && p->op == OpKind::BroadcastInDim) {
      const auto& dims = p->attr<BroadcastAttrs>().broadcast_dims;
      invariant = std::find(dims.begin(), dims.end(), d_) == dims.end();
    } else if (p && is_elementwise(p->op)) {
      invariant = std::all_of(p->inputs.begin(), p->inputs.end(), [&](const Value* in) { return (*this)(in); });
    }
    return known_[v] = invariant;
  }

 private:
  int64_t d_;
  std::unordered_map<const Value*, bool> known_;
};

// The one-hot sum a sum node reads, matched: the where, the index compared with the iota, the
// other factors of its condition, and the zero-keeping unary ops from the where to the sum.
struct OneHot {
  const Node* where = nullptr;
  const Value* index = nullptr;
  std::vector<const Value*> kept;  // the condition's other bitwise_and terms
  std::vector<const Node*> unary;  // from the where towards the sum
};

// The condition's terms: exactly one eq of the iota along d and an integer index invariant along
// d, every other bitwise_and term invariant along d.
bool match_condition(const Value* c, int64_t d, InvariantAlong& invariant_along, OneHot& m) {
  const Node* p = c->producer;
  if (p && p->op == OpKind::BitwiseAnd && c->dtype == DType::Bool)
    return match_condition(p->inputs[0], d, invariant_along, m) && match_condition(p->inputs[1], d, invariant_along, m);
  if (p && p->op == OpKind::Eq && !m.index) {
    for (int side = 0; side < 2; ++side) {
      const Value* iota = p->inputs[side];
      const Value* index = p->inputs[1 - side];
      if (index->is_tensor && is_integral(index->dtype) && is_iota_along(iota, d) && invariant_along(index)) {
        m.index = index;
        return true;
      }
    }
  }
  if (!invariant_along(c)) return false;
  m.kept.push_back(c);
  return true;
}

std::optional<OneHot> match(const Node& sum) {
  if (sum.op != OpKind::Sum || sum.attr<DimsAttrs>().dims.size() != 1) return std::nullopt;
  const int64_t d = sum.attr<DimsAttrs>().dims[0];
  InvariantAlong invariant_along(d);
  OneHot m;
  const Value* v = sum.inputs[0];
  while (v->producer && (v->producer->op == OpKind::ConvertElementType || v->producer->op == OpKind::Neg)) {
    m.unary.insert(m.unary.begin(), v->producer);
    v = v->producer->inputs[0];
  }
  const Node* w = v->producer;
  if (!w || w->op != OpKind::Where || !is_zero_constant(w->inputs[2]) || !invariant_along(w->inputs[1]) ||
      !match_condition(w->inputs[0], d, invariant_along, m) || !m.index)
    return std::nullopt;
  m.where = w;
  return m;
}

// Rebuilds values that do not vary along dim d without that dim.
class WithoutDim {
 public:
  WithoutDim(FusionRewriter& r, int64_t d, int line) : r_(r), d_(d), line_(line) {}

  Value* operator()(const Value* v) {
    if (!v->is_tensor) return r_.map(v);
    if (auto it = done_.find(v); it != done_.end()) return it->second;
    Shape shape = v->shape;
    shape.erase(shape.begin() + d_);
    const Node& p = *v->producer;
    const std::string name = r_.fresh(v->name + "_row");
    Value* out = nullptr;
    if (p.op == OpKind::Full) {
      FullAttrs a = p.attr<FullAttrs>();
      a.shape = shape;
      out = r_.add(OpKind::Full, {}, a, name, line_);
    } else if (p.op == OpKind::BroadcastInDim) {
      std::vector<int64_t> dims = p.attr<BroadcastAttrs>().broadcast_dims;
      for (int64_t& k : dims) k -= k > d_;
      out = r_.add(OpKind::BroadcastInDim, {r_.map(p.inputs[0])}, BroadcastAttrs{shape, dims}, name, line_);
    } else {
      std::vector<Value*> inputs;
      for (const Value* in : p.inputs) inputs.push_back((*this)(in));
      out = r_.add(p.op, std::move(inputs), p.attrs, name, line_);
    }
    return done_[v] = out;
  }

 private:
  FusionRewriter& r_;
  int64_t d_;
  int line_;
  std::unordered_map<const Value*, Value*> done_;
};

std::string fold(FusionRewriter& r, const Node& sum) {
  const OneHot m = *match(sum);
  const int64_t d = sum.attr<DimsAttrs>().dims[0];
  const int64_t n = sum.inputs[0]->shape[d];
  const Value* out = sum.output();
  WithoutDim without(r, d, sum.line);
  Value* index = without(m.index);
  // The ops in order; the last takes the sum's name.
  std::vector<std::pair<OpKind, OpAttrs>> tail;
  for (const Node* u : m.unary) tail.push_back({u->op, u->attrs});
  const bool plus_zero = is_floating(out->dtype);
  auto step = [&](OpKind op, std::vector<Value*> in, OpAttrs attrs, bool last) {
    return r.add(op, std::move(in), std::move(attrs), last ? out->name : r.fresh(out->name + "_one_hot"), sum.line);
  };
  Value* hit = step(OpKind::BitwiseAnd,
                    {step(OpKind::Ge, {index, r.constant(Scalar::from_int(0))}, NoAttrs{}, false),
                     step(OpKind::Lt, {index, r.constant(Scalar::from_int(n))}, NoAttrs{}, false)},
                    NoAttrs{}, false);
  for (const Value* k : m.kept) hit = step(OpKind::BitwiseAnd, {hit, without(k)}, NoAttrs{}, false);
  Value* v = step(OpKind::Where, {hit, without(m.where->inputs[1]), r.map(m.where->inputs[2])}, NoAttrs{},
                  tail.empty() && !plus_zero);
  for (size_t k = 0; k < tail.size(); ++k) v = step(tail[k].first, {v}, tail[k].second, k + 1 == tail.size() && !plus_zero);
  if (plus_zero) v = step(OpKind::Add, {v, r.constant(Scalar::from_float(0.0))}, NoAttrs{}, true);
  r.replace(out, v);
  return detail::concat("prims.sum ", out->name, ": sums along dim ", d, " of ", sum.inputs[0]->type_string(),
                        " values that are zero but where an iota equals ", m.index->name,
                        ", so it is that one value (a where of ", m.index->name, " in [0, ", n, "))");
}

}  // namespace

RewrittenFusion fold_one_hot_sums(const Fusion& fusion) {
  return rewrite_nodes(fusion, [](const Node& n) { return match(n).has_value(); }, fold);
}

}  // namespace vf
