#include "passes/fuse_matmul_epilogues.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace vf {
namespace {

bool is_constant(const Value* v, double c) {
  return v->is_constant() && std::abs(v->constant->as_double() - c) <= 1e-7 * std::abs(c);
}

// A test of a value: is it the constant c?
auto constant(double c) {
  return [c](const Value* v) { return is_constant(v, c); };
}

// v = op(p, q) in float32 with f(p) and g(q), or f(q) and g(p).
template <class F, class G>
bool either(const Value* v, OpKind op, const F& f, const G& g) {
  const Node* n = v->producer;
  if (!n || n->op != op || n->inputs.size() != 2 || !v->is_tensor || v->dtype != DType::Float32) return false;
  return (f(n->inputs[0]) && g(n->inputs[1])) || (f(n->inputs[1]) && g(n->inputs[0]));
}

// Recognises the float32 tanh gelu of one matmul result r (the header's pattern).
class GeluMatcher {
 public:
  explicit GeluMatcher(const Value* r) : r_(r) {}

  // x: r as float32 (r itself, or a cast of it).
  bool x(const Value* v) const {
    if (v == r_) return r_->dtype == DType::Float32;
    const Node* n = v->producer;
    return n && n->op == OpKind::ConvertElementType && n->inputs[0] == r_ && v->dtype == DType::Float32;
  }

  // (0.5 * x) * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), products and sums either way round.
  bool gelu(const Value* v) const {
    auto is_x = [this](const Value* w) { return x(w); };
    auto half = [&](const Value* w) { return either(w, OpKind::Mul, constant(0.5), is_x); };
    auto cube = [&](const Value* w) {
      const Node* n = w->producer;
      if (n && n->op == OpKind::Pow) return x(n->inputs[0]) && is_constant(n->inputs[1], 3);
      auto square = [&](const Value* s) { return either(s, OpKind::Mul, is_x, is_x); };
      return either(w, OpKind::Mul, square, is_x);
    };
    auto inner = [&](const Value* w) {
      return either(w, OpKind::Add, is_x, [&](const Value* s) { return either(s, OpKind::Mul, constant(0.044715), cube); });
    };
    auto tanh_of = [&](const Value* w) {
      const Node* n = w->producer;
      return n && n->op == OpKind::Tanh && w->dtype == DType::Float32 &&
             either(n->inputs[0], OpKind::Mul, constant(0.7978845608028654), inner);
    };
    return either(v, OpKind::Mul, half, [&](const Value* w) { return either(w, OpKind::Add, constant(1), tanh_of); });
  }

 private:
  const Value* r_;
};

// One matmul whose gelu or residual add folds into it.
struct Fold {
  const Node* mm = nullptr;
  const Value* c = nullptr;                  // a residual add's other operand; null for a gelu
  const Value* y = nullptr;                  // the gelu or sum, as the program returns or reads it
  std::unordered_set<const Node*> removed;   // the nodes from r to y (r's casts only if nothing else reads them)
  bool r_read = false;                       // r is read by something else, or returned
};

// The nodes whose results are returned or read by a live node (the pass before this one leaves
// casts that nothing reads).
std::unordered_set<const Node*> live_nodes(const Fusion& fusion) {
  std::unordered_set<const Node*> live;
  for (auto it = fusion.nodes().rbegin(); it != fusion.nodes().rend(); ++it) {
    const Node* n = it->get();
    for (const Value* out : n->outputs)
      if (fusion.is_output(out) || std::any_of(out->uses.begin(), out->uses.end(), [&](const Node* u) { return live.count(u) > 0; }))
        live.insert(n);
  }
  return live;
}

// v's one live reader, or null when v is returned or has none or several.
const Node* only_reader(const Fusion& fusion, const std::unordered_set<const Node*>& live, const Value* v) {
  if (fusion.is_output(v)) return nullptr;
  const Node* reader = nullptr;
  for (const Node* u : v->uses) {
    if (!live.count(u)) continue;
    if (reader) return nullptr;
    reader = u;
  }
  return reader;
}

// Whether v is, through view ops, a broadcast of fewer elements (C would be a copy of it in full,
// where a kernel adding it reads each element once).
bool is_broadcast(const Value* v) {
  for (const Value* w = v; w->producer && is_view_op(w->producer->op); w = w->producer->inputs[0])
    if (w->producer->inputs[0]->numel() < v->numel()) return true;
  return false;
}

// The fold of the gelu of matmul `mm`'s result, if its pattern is there and nothing live reads
// the ops between.
std::optional<Fold> find_gelu(const Fusion& fusion, const std::unordered_set<const Node*>& live, const Node& mm) {
  const Value* r = mm.output();
  if (r->dtype != DType::Float16 && r->dtype != DType::BFloat16 && r->dtype != DType::Float32) return {};
  if (r->numel() == 0) return {};
  const GeluMatcher match(r);
  Fold fold;
  fold.mm = &mm;
  // Candidates: the products of a (0.5 * x), for each x of r.
  std::vector<const Value*> xs;
  if (match.x(r)) xs.push_back(r);
  for (const Node* u : r->uses)
    if (match.x(u->output())) xs.push_back(u->output());
  for (const Value* x : xs) {
    for (const Node* half : x->uses) {
      for (const Node* product : half->output()->uses) {
        const Value* g = product->output();
        if (!match.gelu(g)) continue;
        fold.removed.clear();
        // The nodes between r and g.
        std::vector<const Value*> stack = {g};
        while (!stack.empty()) {
          const Value* v = stack.back();
          stack.pop_back();
          if (v == r || !v->producer || !fold.removed.insert(v->producer).second) continue;
          for (const Value* in : v->producer->inputs) stack.push_back(in);
        }
        // y: g itself for a float32 r, else g's one live reader, a cast back to r's dtype.
        fold.y = g;
        if (r->dtype != DType::Float32) {
          const Node* narrow = only_reader(fusion, live, g);
          if (!narrow || narrow->op != OpKind::ConvertElementType || narrow->output()->dtype != r->dtype) continue;
          fold.y = narrow->output();
          fold.removed.insert(narrow);
        }
        // Every value between r and y is read only there (r's casts may be read elsewhere: kept).
        bool inside = true;
        std::vector<const Node*> kept_casts;
        for (const Node* n : fold.removed) {
          if (n == fold.y->producer) continue;
          const bool read_outside = fusion.is_output(n->output()) ||
                                    std::any_of(n->output()->uses.begin(), n->output()->uses.end(),
                                                [&](const Node* u) { return live.count(u) && !fold.removed.count(u); });
          if (!read_outside) continue;
          if (n->op == OpKind::ConvertElementType && n->inputs[0] == r)
            kept_casts.push_back(n);
          else
            inside = false;
        }
        if (!inside) continue;
        for (const Node* n : kept_casts) fold.removed.erase(n);
        fold.r_read = fusion.is_output(r) || std::any_of(r->uses.begin(), r->uses.end(), [&](const Node* u) {
                        return live.count(u) && !fold.removed.count(u);
                      });
        const int64_t n_size = mm.inputs[1]->rank() > 1 ? r->shape.back() : 1;
        if (fold.r_read && n_size % 8 != 0) continue;
        return fold;
      }
    }
  }
  return {};
}

// The fold of a residual add of matmul `mm`'s result r, its one reader: y = convert(float32(r) +
// float32(c), r's dtype), or y = r + c for a float32 or float64 r, c of r's shape and dtype and no
// broadcast.
std::optional<Fold> find_residual(const Fusion& fusion, const std::unordered_set<const Node*>& live, const Node& mm) {
  const Value* r = mm.output();
  if (!is_floating(r->dtype) || r->numel() == 0) return {};
  auto reader_of = [&](const Value* v) { return only_reader(fusion, live, v); };
  auto cast_to = [](const Node* n, DType d) { return n && n->op == OpKind::ConvertElementType && n->output()->dtype == d; };
  const bool wide = r->dtype == DType::Float32 || r->dtype == DType::Float64;
  Fold fold;
  fold.mm = &mm;
  fold.removed.insert(&mm);
  const Value* x = r;  // r as the add reads it
  if (!wide) {
    const Node* widen = reader_of(r);
    if (!cast_to(widen, DType::Float32)) return {};
    fold.removed.insert(widen);
    x = widen->output();
  }
  const Node* add = reader_of(x);
  if (!add || add->op != OpKind::Add || add->inputs.size() != 2 || add->inputs[0] == add->inputs[1]) return {};
  fold.removed.insert(add);
  const Value* other = add->inputs[add->inputs[0] == x ? 1 : 0];
  if (!other->is_tensor || other->shape != r->shape) return {};
  fold.c = other;
  fold.y = add->output();
  if (wide) {
    if (other->dtype != r->dtype || is_broadcast(other)) return {};
    return fold;
  }
  const Node* narrow = reader_of(add->output());
  if (!cast_to(other->producer, DType::Float32) || other->producer->inputs[0]->dtype != r->dtype ||
      !cast_to(narrow, r->dtype))
    return {};
  fold.c = other->producer->inputs[0];
  if (is_broadcast(fold.c)) return {};
  if (reader_of(other)) fold.removed.insert(other->producer);
  fold.removed.insert(narrow);
  fold.y = narrow->output();
  return fold;
}

}  // namespace

RewrittenFusion fuse_matmul_epilogues(const Fusion& fusion) {
  const std::unordered_set<const Node*> live = live_nodes(fusion);
  // Each fold by the node where its call goes: a gelu's at the matmul, a residual add's at the add
  // (its addend may be computed after the matmul).
  std::unordered_map<const Node*, Fold> folds;
  std::unordered_set<const Node*> removed;
  for (const auto& n : fusion.nodes()) {
    if (n->op != OpKind::Matmul || !live.count(n.get())) continue;
    std::optional<Fold> fold = find_gelu(fusion, live, *n);
    if (!fold) fold = find_residual(fusion, live, *n);
    if (!fold) continue;
    removed.insert(fold->removed.begin(), fold->removed.end());
    folds.emplace(fold->c ? fold->y->producer : n.get(), std::move(*fold));
  }
  if (folds.empty()) return {};
  FusionRewriter rw(fusion);
  std::vector<std::string> notes;
  for (const auto& n : fusion.nodes()) {
    const auto at = folds.find(n.get());
    if (at == folds.end()) {
      if (!removed.count(n.get()) && live.count(n.get())) rw.copy(*n);  // dead nodes go too
      continue;
    }
    const Fold& fold = at->second;
    const Node& mm = *fold.mm;
    const Value* r = mm.output();
    const Value* y = fold.y;
    std::vector<Value*> inputs = {rw.map(mm.inputs[0]), rw.map(mm.inputs[1])};
    if (fold.c) inputs.push_back(rw.map(fold.c));
    if (const int bias = contraction_slots(mm).bias; bias >= 0) inputs.push_back(rw.map(mm.inputs[static_cast<size_t>(bias)]));
    if (fold.c) {
      rw.replace(y, rw.add(OpKind::MatmulAdd, std::move(inputs), NoAttrs{}, y->name, mm.line));
      notes.push_back(y->name + " = matmul_add: matmul " + r->name + " plus " + fold.c->name + " (" +
                      std::to_string(fold.removed.size() - 1) + " ops) in the call (C, beta = 1)");
      continue;
    }
    const auto& outs = rw.add_node(OpKind::MatmulGelu, std::move(inputs), NoAttrs{}, {y->name, r->name}, mm.line);
    rw.replace(y, outs[0]);
    rw.replace(r, outs[1]);
    notes.push_back("(" + y->name + ", " + r->name + ") = matmul_gelu: the tanh gelu " + y->name + " of matmul " +
                    r->name + " (" + std::to_string(fold.removed.size()) + " ops) in the call's epilogue" +
                    (fold.r_read ? "; " + r->name + " is written too (the epilogue's aux output)" : ""));
  }
  return rw.finish(std::move(notes));
}

}  // namespace vf
