#include "passes/split_reductions.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"

namespace vf {
namespace {

struct Split {
  int64_t rows = 0, row = 0, chunk = 0;
};

// The split of a reduction node, or chunk 0 when it stays whole.
Split split_of(const Node& n) {
  if (n.op != OpKind::Sum && n.op != OpKind::Prod && n.op != OpKind::Amax && n.op != OpKind::Amin) return {};
  const Value* in = n.inputs[0];
  if (!is_floating(in->dtype) || in->numel() == 0) return {};
  Split s;
  s.row = 1;
  for (int64_t d : n.attr<DimsAttrs>().dims) s.row *= in->shape[d];
  s.rows = in->numel() / s.row;
  if (s.rows >= kSplitFewRows || s.row <= kSplitLongRow) return {};
  for (int64_t c = kSplitMaxChunk; c >= kSplitMinChunk && s.chunk == 0; --c)
    if (s.row % c == 0) s.chunk = c;
  return s;
}

class Rewriter {
 public:
  explicit Rewriter(const Fusion& original) : original_(original), fusion_(std::make_shared<Fusion>()) {}

  SplitReductions run() {
    for (const Value* in : original_.inputs())
      mapped_[in] = in->is_tensor ? fusion_->add_tensor_input(in->name, in->dtype, in->shape)
                                  : fusion_->add_scalar_input(in->name, in->scalar_kind);
    for (const auto& n : original_.nodes()) {
      const Split s = split_of(*n);
      if (s.chunk > 0)
        split(*n, s);
      else
        copy(*n);
    }
    for (const Value* out : original_.outputs()) fusion_->add_output(map(out));
    return {std::move(fusion_), std::move(notes_)};
  }

 private:
  Value* map(const Value* v) {
    if (auto it = mapped_.find(v); it != mapped_.end()) return it->second;
    VF_INTERNAL_CHECK(v->is_constant(), "split_long_reductions: ", v->name, " is used before it is defined");
    return mapped_[v] = fusion_->add_constant(*v->constant);
  }

  // A name that neither fusion has.
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; original_.find(name) || fusion_->find(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  void copy(const Node& n) {
    std::vector<Value*> inputs;
    for (const Value* in : n.inputs) inputs.push_back(map(in));
    std::vector<std::string> names;
    for (const Value* out : n.outputs) names.push_back(out->name);
    const auto& outs = fusion_->add_node(n.op, std::move(inputs), n.attrs, std::move(names), n.line);
    for (size_t i = 0; i < outs.size(); ++i) mapped_[n.outputs[i]] = outs[i];
  }

  // The chunks replace the reduced dims where those are adjacent (an outer reduction keeps its
  // memory order, so that its loads stay coalesced); otherwise a transpose moves the kept dims
  // first and the chunks follow them.
  void split(const Node& n, const Split& s) {
    const Value* in = n.inputs[0];
    const Value* out = n.output();
    std::vector<int64_t> dims = n.attr<DimsAttrs>().dims;
    std::sort(dims.begin(), dims.end());
    Value* x = map(in);
    Shape shape;
    int64_t at = 0;  // the dim of the chunk count; the chunk's elements are dim at + 1
    if (dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size())) {
      at = dims.front();
      shape.assign(in->shape.begin(), in->shape.begin() + at);
      shape.push_back(s.row / s.chunk);
      shape.push_back(s.chunk);
      shape.insert(shape.end(), in->shape.begin() + dims.back() + 1, in->shape.end());
    } else {
      std::vector<int64_t> perm;
      for (int64_t d = 0; d < in->rank(); ++d)
        if (!std::binary_search(dims.begin(), dims.end(), d)) {
          perm.push_back(d);
          shape.push_back(in->shape[d]);
        }
      at = static_cast<int64_t>(shape.size());
      perm.insert(perm.end(), dims.begin(), dims.end());
      x = fusion_->add_node(OpKind::Transpose, {x}, PermuteAttrs{perm}, {fresh(out->name + "_kept_first")}, n.line)[0];
      shape.push_back(s.row / s.chunk);
      shape.push_back(s.chunk);
    }
    x = fusion_->add_node(OpKind::Reshape, {x}, ReshapeAttrs{shape}, {fresh(out->name + "_chunks")}, n.line)[0];
    const bool widen = (n.op == OpKind::Sum || n.op == OpKind::Prod) && dtype_size(in->dtype) < 4;
    if (widen)
      x = fusion_->add_node(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32}, {fresh(out->name + "_f32_in")},
                            n.line)[0];
    const std::string partial_name = fresh(out->name + "_partial");
    Value* partial = fusion_->add_node(n.op, {x}, DimsAttrs{{at + 1}}, {partial_name}, n.line)[0];
    Value* result = nullptr;
    if (widen) {
      Value* wide = fusion_->add_node(n.op, {partial}, DimsAttrs{{at}}, {fresh(out->name + "_f32")}, n.line)[0];
      result = fusion_->add_node(OpKind::ConvertElementType, {wide}, CastAttrs{out->dtype}, {out->name}, n.line)[0];
    } else {
      result = fusion_->add_node(n.op, {partial}, DimsAttrs{{at}}, {out->name}, n.line)[0];
    }
    VF_INTERNAL_CHECK(result->shape == out->shape && result->dtype == out->dtype, "split of ", out->name, " gives ",
                      result->type_string(), ", not ", out->type_string());
    mapped_[out] = result;
    notes_.push_back(detail::concat("prims.", op_name(n.op), " ", out->name, ": ", s.rows, " row(s) of ", s.row,
                                    " elements, split into ", s.row / s.chunk, " chunks of ", s.chunk, " (partials ",
                                    partial_name, (widen ? ", float32" : ""), ")"));
  }

  const Fusion& original_;
  std::shared_ptr<Fusion> fusion_;
  std::unordered_map<const Value*, Value*> mapped_;
  std::vector<std::string> notes_;
};

}  // namespace

SplitReductions split_long_reductions(const Fusion& fusion) {
  const bool any = std::any_of(fusion.nodes().begin(), fusion.nodes().end(),
                               [](const auto& n) { return split_of(*n).chunk > 0; });
  if (!any) return {};
  return Rewriter(fusion).run();
}

}  // namespace vf
