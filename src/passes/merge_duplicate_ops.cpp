#include "passes/merge_duplicate_ops.h"

#include <bit>
#include <functional>
#include <unordered_map>

#include "base/error.h"

namespace vf {
namespace {

// An operand as the merge compares it: a literal by kind and bits, anything else by identity.
struct Operand {
  const Value* value = nullptr;  // null for a literal
  ScalarKind kind = ScalarKind::Int;
  uint64_t bits = 0;

  bool operator==(const Operand&) const = default;
};

Operand operand_of(const Value* v) {
  if (!v->is_constant()) return {v};
  const Scalar& s = *v->constant;
  return {nullptr, s.kind, s.kind == ScalarKind::Float ? std::bit_cast<uint64_t>(s.f) : static_cast<uint64_t>(s.i)};
}

uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull; }

uint64_t hash_of(OpKind op, const std::vector<Operand>& operands) {
  uint64_t h = mix(0xcbf29ce484222325ull, static_cast<uint64_t>(op));
  for (const Operand& o : operands)
    h = mix(mix(mix(h, std::hash<const Value*>{}(o.value)), static_cast<uint64_t>(o.kind)), o.bits);
  return h;
}

std::vector<Operand> operands_of(const std::vector<Value*>& inputs) {
  std::vector<Operand> operands;
  for (const Value* in : inputs) operands.push_back(operand_of(in));
  return operands;
}

}  // namespace

RewrittenFusion merge_duplicate_ops(const Fusion& fusion) {
  FusionRewriter r(fusion);
  // The rewritten nodes by the hash of their op and operands.
  std::unordered_multimap<uint64_t, const Node*> seen;
  int merged = 0;
  std::string names;
  for (const auto& n : fusion.nodes()) {
    std::vector<Value*> inputs;
    for (const Value* in : n->inputs) inputs.push_back(r.map(in));
    const std::vector<Operand> operands = operands_of(inputs);
    const uint64_t h = hash_of(n->op, operands);
    const Node* same = nullptr;
    for (auto [it, end] = seen.equal_range(h); it != end && !same; ++it) {
      const Node* m = it->second;
      if (m->op == n->op && m->attrs == n->attrs && operands_of(m->inputs) == operands) same = m;
    }
    if (same) {
      for (size_t i = 0; i < n->outputs.size(); ++i) r.set(n->outputs[i], same->outputs[i]);
      ++merged;
      names += (names.empty() ? "" : ", ") + n->outputs[0]->name + " = " + same->outputs[0]->name;
      continue;
    }
    r.copy(*n);
    seen.emplace(h, r.map(n->outputs[0])->producer);
  }
  if (merged == 0) return {};
  return r.finish({detail::concat(merged, " op(s) computing a value already computed read it instead: ", names)});
}

}  // namespace vf
