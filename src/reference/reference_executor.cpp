// The reference executor: checks the arguments, then runs the fusion's nodes in program order.
#include "reference/reference_executor.h"

#include <unordered_map>

#include "base/error.h"
#include "ir/check_input.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf {
namespace {

// Checks one argument against its fusion input and returns it as the executor uses it (an int
// given for a float input becomes a float, a bool for an int becomes an int).
HostArg check_arg(const Value& input, const HostArg& arg) {
  const auto* t = std::get_if<HostTensor>(&arg);
  ArgView view;
  view.is_tensor = t != nullptr;
  if (t) {
    view.defined = t->defined();
    view.dtype = t->dtype();
    view.shape = &t->shape();
  } else {
    view.scalar = std::get<Scalar>(arg);
  }
  check_input(input, view);
  if (t) return arg;
  const Scalar& s = view.scalar;
  switch (input.scalar_kind) {
    case ScalarKind::Bool: return s;
    case ScalarKind::Int: return Scalar::from_int(s.i);
    case ScalarKind::Float: return Scalar::from_float(s.as_double());
  }
  VF_INTERNAL_ERROR("bad scalar kind");
}

// A contiguous copy of t with the same values.
HostTensor contiguous_copy(const HostTensor& t) {
  HostTensor out = HostTensor::empty(t.dtype(), t.shape());
  const int64_t size = dtype_size(t.dtype());
  int64_t linear = 0;
  for_each_index(t.shape(), [&](const int64_t* index) {
    std::memcpy(reference::contiguous_element(out, linear++), t.element(index), size);
  });
  return out;
}

}  // namespace

std::vector<HostTensor> run_reference_node(const Node& node, const std::vector<HostArg>& inputs) {
  VF_INTERNAL_CHECK(inputs.size() == node.inputs.size(), "reference: prims.", op_name(node.op), " has ",
                    node.inputs.size(), " inputs but was given ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    VF_INTERNAL_CHECK(std::holds_alternative<HostTensor>(inputs[i]) == node.inputs[i]->is_tensor,
                      "reference: prims.", op_name(node.op), " argument ", i, " has the wrong kind");
  switch (op_category(node.op)) {
    case OpCategory::View: case OpCategory::Movement:
      return {reference::run_movement(node, inputs)};
    case OpCategory::Cast: case OpCategory::Unary: case OpCategory::Binary: case OpCategory::Ternary:
      return {reference::run_elementwise(node, inputs)};
    case OpCategory::Reduction:
      return reference::run_reduction(node, std::get<HostTensor>(inputs.at(0)));
    case OpCategory::Creation:
      return {reference::run_creation(node, inputs)};
    case OpCategory::Scatter:
      return {reference::run_scatter(node, inputs)};
    case OpCategory::Scan:
      return {reference::run_scan(node, std::get<HostTensor>(inputs.at(0)))};
    case OpCategory::Contraction:
      return reference::run_matmul(node, inputs);
  }
  VF_INTERNAL_ERROR("bad op category for prims.", op_name(node.op));
}

std::vector<HostTensor> run_reference(const Fusion& fusion, const std::vector<HostArg>& args) {
  const auto& inputs = fusion.inputs();
  check_input_count(fusion, args.size());
  std::unordered_map<const Value*, HostArg> env;
  for (size_t i = 0; i < inputs.size(); ++i) env.emplace(inputs[i], check_arg(*inputs[i], args[i]));

  auto lookup = [&](const Value* v) -> HostArg {
    if (v->is_constant()) return *v->constant;
    auto it = env.find(v);
    VF_INTERNAL_CHECK(it != env.end(), "reference: value '", v->name, "' is used before it is defined");
    return it->second;
  };
  for (const auto& node : fusion.nodes()) {
    std::vector<HostArg> node_args;
    node_args.reserve(node->inputs.size());
    for (const Value* v : node->inputs) node_args.push_back(lookup(v));
    std::vector<HostTensor> results = run_reference_node(*node, node_args);
    VF_INTERNAL_CHECK(results.size() == node->outputs.size(), "reference: prims.", op_name(node->op),
                      " gave ", results.size(), " results for ", node->outputs.size(), " outputs");
    for (size_t i = 0; i < results.size(); ++i) env.insert_or_assign(node->outputs[i], std::move(results[i]));
  }

  std::vector<HostTensor> outputs;
  for (const Value* v : fusion.outputs()) {
    HostArg result = lookup(v);
    // Outputs are new tensors: an output that is also an input (or appears twice) is copied.
    const HostTensor& t = std::get<HostTensor>(result);
    outputs.push_back(fusion.is_input(v) ? contiguous_copy(t) : t);
  }
  // An output listed twice shares nothing with its other occurrence.
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (outputs[i].storage() == outputs[j].storage()) outputs[i] = contiguous_copy(outputs[i]);
  return outputs;
}

}  // namespace vf
