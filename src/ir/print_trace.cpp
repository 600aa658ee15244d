// The trace printer: one prims call per node, every attribute spelled out so the reader rebuilds
// the same program.
#include "ir/print_trace.h"

#include <cmath>
#include <sstream>

namespace vf {
namespace {

std::string int_tuple(const std::vector<int64_t>& v) {
  std::ostringstream out;
  out << '(';
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  if (v.size() == 1) out << ',';
  out << ')';
  return out.str();
}

std::string operand(const Value* v) { return v->is_constant() ? scalar_to_python(*v->constant) : v->name; }

std::string dtype_ref(DType d) { return "dtypes." + std::string(dtype_long_name(d)); }

// A number that reads back to the same double: an int literal when exact, else a float literal.
std::string number(double x) {
  if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 9.0e15)
    return std::to_string(static_cast<int64_t>(x));
  return scalar_to_python(Scalar::from_float(x));
}

std::string call_args(const Node& node) {
  std::ostringstream out;
  auto first_input = [&] { return operand(node.inputs.at(0)); };
  switch (node.op) {
    case OpKind::Transpose:
      out << first_input() << ", " << int_tuple(node.attr<PermuteAttrs>().permutation);
      break;
    case OpKind::Reshape:
      out << first_input() << ", " << int_tuple(node.attr<ReshapeAttrs>().shape);
      break;
    case OpKind::BroadcastInDim: {
      const auto& a = node.attr<BroadcastAttrs>();
      out << first_input() << ", " << int_tuple(a.shape) << ", " << int_tuple(a.broadcast_dims);
      break;
    }
    case OpKind::SlicePrim: {
      const auto& a = node.attr<SliceAttrs>();
      out << first_input() << ", " << int_tuple(a.start) << ", " << int_tuple(a.end) << ", " << int_tuple(a.step);
      break;
    }
    case OpKind::Squeeze: case OpKind::Flip: case OpKind::Sum: case OpKind::Prod: case OpKind::Amax:
    case OpKind::Amin:
      out << first_input() << ", " << int_tuple(node.attr<DimsAttrs>().dims);
      break;
    case OpKind::Var: case OpKind::VarMean: {
      const auto& a = node.attr<VarAttrs>();
      out << first_input() << ", " << int_tuple(a.dims) << ", correction=" << number(a.correction);
      break;
    }
    case OpKind::Pad: {
      out << first_input() << ", " << operand(node.inputs.at(1)) << ", (";
      const auto& config = node.attr<PadAttrs>().config;
      for (size_t i = 0; i < config.size(); ++i)
        out << (i ? ", " : "") << '(' << config[i].lo << ", " << config[i].hi << ", " << config[i].interior << ')';
      if (config.size() == 1) out << ',';
      out << ')';
      break;
    }
    case OpKind::Cat: {
      out << '[';
      for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? ", " : "") << operand(node.inputs[i]);
      out << "], " << node.attr<AxisAttrs>().dim;
      break;
    }
    case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather:
      out << first_input() << ", " << operand(node.inputs.at(1)) << ", " << node.attr<AxisAttrs>().dim;
      break;
    case OpKind::Cumsum:
      out << first_input() << ", " << node.attr<AxisAttrs>().dim;
      break;
    case OpKind::ScatterAdd: case OpKind::ScatterMax:
      out << first_input() << ", " << operand(node.inputs.at(1)) << ", " << operand(node.inputs.at(2)) << ", "
          << node.attr<AxisAttrs>().dim;
      break;
    case OpKind::ConvertElementType:
      out << first_input() << ", " << dtype_ref(node.attr<CastAttrs>().dtype);
      break;
    case OpKind::Full: {
      const auto& a = node.attr<FullAttrs>();
      out << int_tuple(a.shape) << ", " << scalar_to_python(a.value) << ", device=devices.Device(\"cpu\"), dtype="
          << dtype_ref(a.dtype);
      break;
    }
    case OpKind::Iota: {
      const auto& a = node.attr<IotaAttrs>();
      out << a.length << ", start=" << a.start << ", step=" << a.step << ", device=devices.Device(\"cpu\"), dtype="
          << dtype_ref(a.dtype);
      break;
    }
    case OpKind::UniformPhilox: {
      const auto& a = node.attr<UniformAttrs>();
      out << int_tuple(a.shape) << ", " << scalar_to_python(Scalar::from_float(a.minval)) << ", "
          << scalar_to_python(Scalar::from_float(a.maxval)) << ", device=devices.Device(\"cpu\"), dtype="
          << dtype_ref(a.dtype) << ", seed=" << operand(node.inputs.at(0)) << ", offset=" << operand(node.inputs.at(1));
      break;
    }
    // Elementwise ops without attributes: the operands in order.
    case OpKind::Abs: case OpKind::Neg: case OpKind::Exp: case OpKind::Exp2: case OpKind::Expm1:
    case OpKind::Log: case OpKind::Log1p: case OpKind::Log2: case OpKind::Log10: case OpKind::Sqrt:
    case OpKind::Rsqrt: case OpKind::Reciprocal: case OpKind::Sin: case OpKind::Cos: case OpKind::Tan:
    case OpKind::Tanh: case OpKind::Sinh: case OpKind::Cosh: case OpKind::Asin: case OpKind::Acos:
    case OpKind::Atan: case OpKind::Erf: case OpKind::Erfc: case OpKind::Erfinv: case OpKind::Sign:
    case OpKind::Acosh: case OpKind::Asinh: case OpKind::Atanh: case OpKind::Lgamma: case OpKind::Digamma:
    case OpKind::Erfcinv: case OpKind::Ndtri: case OpKind::FrexpMantissa: case OpKind::FrexpExponent:
    case OpKind::Floor: case OpKind::Ceil: case OpKind::Round: case OpKind::Trunc: case OpKind::IsFinite:
    case OpKind::BitwiseNot: case OpKind::Signbit: case OpKind::Add: case OpKind::Sub: case OpKind::Mul:
    case OpKind::Div: case OpKind::Pow: case OpKind::Maximum: case OpKind::Minimum: case OpKind::Fmod:
    case OpKind::Remainder: case OpKind::Atan2: case OpKind::Eq: case OpKind::Ne: case OpKind::Lt:
    case OpKind::Le: case OpKind::Gt: case OpKind::Ge: case OpKind::BitwiseAnd: case OpKind::BitwiseOr:
    case OpKind::BitwiseXor: case OpKind::Where: case OpKind::Lerp: case OpKind::Nextafter: case OpKind::Zeta:
    case OpKind::BitwiseLeftShift: case OpKind::BitwiseRightShift: case OpKind::Matmul:
    case OpKind::MatmulGelu: case OpKind::MatmulAdd:
      for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? ", " : "") << operand(node.inputs[i]);
      break;
  }
  return out.str();
}

std::string annotation(const Value& v) {
  if (!v.is_tensor) return std::string(scalar_kind_name(v.scalar_kind));
  return "cpu " + v.type_string();
}

}  // namespace

std::string print_trace(const Fusion& fusion, std::string_view function_name) {
  std::ostringstream out;
  out << "def " << function_name << '(';
  for (size_t i = 0; i < fusion.inputs().size(); ++i) out << (i ? ", " : "") << fusion.inputs()[i]->name;
  out << "):\n";
  for (const Value* in : fusion.inputs()) out << "  # " << in->name << ": \"" << annotation(*in) << "\"\n";
  for (const auto& node : fusion.nodes()) {
    out << "  ";
    if (node->outputs.size() == 1) {
      out << node->output()->name;
    } else {
      out << '(';
      for (size_t i = 0; i < node->outputs.size(); ++i) out << (i ? ", " : "") << node->outputs[i]->name;
      out << ')';
    }
    out << " = prims." << op_name(node->op) << '(' << call_args(*node) << ')';
    if (node->outputs.size() == 1)
      out << "  # " << node->output()->name << ": \"" << annotation(*node->output()) << '"';
    out << '\n';
  }
  const auto& outs = fusion.outputs();
  if (outs.empty()) {
    out << "  return None\n";
  } else if (outs.size() == 1) {
    out << "  return " << outs[0]->name << '\n';
  } else {
    out << "  return (";
    for (size_t i = 0; i < outs.size(); ++i) out << (i ? ", " : "") << outs[i]->name;
    out << ")\n";
  }
  return out.str();
}

}  // namespace vf
