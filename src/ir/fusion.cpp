// The Fusion container: values, nodes, inputs and outputs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "ir/infer_types.h"
#include "ir/ir.h"

namespace vf {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

std::string Value::type_string() const {
  if (!is_tensor) return scalar_kind_name(scalar_kind);
  return std::string(dtype_short_name(dtype)) + shape_to_string(shape);
}

std::string Fusion::unique_name(std::string wanted) {
  if (!wanted.empty()) {
    VF_USER_CHECK(!find(wanted), "the name '", wanted, "' is defined twice");
    return wanted;
  }
  for (;;) {
    std::string name = "t" + std::to_string(next_fresh_++);
    if (!find(name)) return name;
  }
}

Value* Fusion::new_value(std::string name) {
  auto value = std::make_unique<Value>();
  value->id = static_cast<int>(values_.size());
  value->name = std::move(name);
  if (!value->name.empty()) by_name_[value->name] = value.get();
  values_.push_back(std::move(value));
  return values_.back().get();
}

static void check_shape(std::string_view what, const Shape& shape) {
  for (int64_t s : shape)
    VF_USER_CHECK(s >= 0, what, ": sizes must be >= 0, got ", shape_to_string(shape));
}

Value* Fusion::add_tensor_input(std::string name, DType dtype, Shape shape) {
  check_shape("input '" + name + "'", shape);
  Value* v = new_value(unique_name(std::move(name)));
  v->is_tensor = true;
  v->dtype = dtype;
  v->shape = std::move(shape);
  inputs_.push_back(v);
  return v;
}

Value* Fusion::add_scalar_input(std::string name, ScalarKind kind) {
  Value* v = new_value(unique_name(std::move(name)));
  v->is_tensor = false;
  v->scalar_kind = kind;
  inputs_.push_back(v);
  return v;
}

Value* Fusion::add_constant(Scalar value) {
  // Constants are named after their id; the printer writes them back as literals.
  Value* v = new_value(unique_name("_c" + std::to_string(values_.size())));
  v->is_tensor = false;
  v->scalar_kind = value.kind;
  v->constant = value;
  return v;
}

const std::vector<Value*>& Fusion::add_node(OpKind op, std::vector<Value*> inputs, OpAttrs attrs,
                                             std::vector<std::string> output_names, int line) {
  for (Value* in : inputs) VF_INTERNAL_CHECK(in != nullptr, "null input to ", op_name(op));
  std::vector<ValueType> types = infer_types(op, inputs, attrs);
  VF_USER_CHECK(output_names.empty() || output_names.size() == types.size(), "prims.", op_name(op),
                " returns ", types.size(), " value(s), but ", output_names.size(),
                " name(s) were given");
  // Check every name before creating any value, so that a failure leaves the fusion unchanged.
  for (auto name = output_names.begin(); name != output_names.end(); ++name)
    VF_USER_CHECK(name->empty() || (!find(*name) && std::find(output_names.begin(), name, *name) == name),
                  "the name '", *name, "' is defined twice");
  auto node = std::make_unique<Node>();
  node->id = static_cast<int>(nodes_.size());
  node->op = op;
  node->inputs = std::move(inputs);
  node->attrs = std::move(attrs);
  node->line = line;
  for (size_t i = 0; i < types.size(); ++i) {
    Value* out = new_value(unique_name(output_names.empty() ? "" : output_names[i]));
    out->is_tensor = types[i].is_tensor;
    out->dtype = types[i].dtype;
    out->shape = std::move(types[i].shape);
    out->scalar_kind = types[i].scalar_kind;
    out->producer = node.get();
    node->outputs.push_back(out);
  }
  for (Value* in : node->inputs)
    if (in->uses.empty() || in->uses.back() != node.get()) in->uses.push_back(node.get());
  nodes_.push_back(std::move(node));
  return nodes_.back()->outputs;
}

void Fusion::add_output(Value* value) {
  VF_INTERNAL_CHECK(value != nullptr, "null output");
  VF_USER_CHECK(value->is_tensor, "fusion outputs must be tensors; '", value->name, "' is a ",
                value->type_string());
  outputs_.push_back(value);
}

Value* Fusion::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

bool Fusion::is_input(const Value* v) const {
  return std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end();
}
bool Fusion::is_output(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

bool is_zero_full(const Value* v) {
  const Node* p = v->producer;
  if (!p || p->op != OpKind::Full) return false;
  const Scalar& x = p->attr<FullAttrs>().value;
  return x.kind == ScalarKind::Float ? x.f == 0 && !std::signbit(x.f) : x.i == 0;
}

}  // namespace vf
