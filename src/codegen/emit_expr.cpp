// Emitting kernel IR expressions and the argument struct as C++ (shared by the CPU and CUDA emitters).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "base/error.h"
#include "codegen/emit_source.h"

namespace vf {

const char kPreludeCommon[] =
#include "codegen/prelude_common.inc"
    ;

std::string field_name(int k) { return "a.f" + std::to_string(k); }

namespace {

// The C name suffix of a dtype in vf_to_<name>.
const char* cast_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "b8";
    case DType::UInt8: return "ui8";
    case DType::Int8: return "i8";
    case DType::Int16: return "i16";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::Float16: return "f16";
    case DType::BFloat16: return "bf16";
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
  }
  return "f32";
}

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "(-0x7fffffffffffffffll - 1)";
  return "(" + std::to_string(v) + "ll)";
}

std::string double_literal(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  if (!std::isfinite(v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "vf_bits_f64(0x%" PRIx64 "ull)", bits);
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return std::string("(") + buf + ")";
}

std::string scalar_literal(const Scalar& s) {
  return s.kind == ScalarKind::Float ? double_literal(s.f) : int_literal(s.i);
}

std::string convert(DType to, const std::string& x) { return std::string("vf_to_") + cast_name(to) + "(" + x + ")"; }

// The rounding a half dtype needs after each op (identity for other dtypes).
std::string rounded(DType dtype, const std::string& x) {
  if (dtype == DType::Float16) return "vf_round_f16(" + x + ")";
  if (dtype == DType::BFloat16) return "vf_round_bf16(" + x + ")";
  return x;
}

std::string index_expr(const LoopNest& nest, int id, const std::vector<std::string>& vars);

// The expression defining index node id from its operands' names ("" for leaves).
std::string index_text(const LoopNest& nest, int id, const std::vector<std::string>& vars) {
  const IndexExpr& e = nest.indices[id];
  auto x = [&](int k) { return index_expr(nest, k, vars); };
  switch (e.op) {
    case IndexOp::Var: case IndexOp::Const: case IndexOp::Param: return "";
    case IndexOp::Gathered:
      return "vf_gathered((vf_i64)v" + std::to_string(e.value) + ", " + x(e.a) + ", " + x(e.b) + ", " + x(e.c) + ")";
    case IndexOp::Add: return x(e.a) + " + " + x(e.b);
    case IndexOp::Sub: return x(e.a) + " - " + x(e.b);
    case IndexOp::Mul: return x(e.a) + " * " + x(e.b);
    case IndexOp::Div: return x(e.a) + " / " + x(e.b);
    case IndexOp::Mod: return x(e.a) + " % " + x(e.b);
    case IndexOp::Min: return x(e.a) + " < " + x(e.b) + " ? " + x(e.a) + " : " + x(e.b);
    case IndexOp::Lt: return x(e.a) + " < " + x(e.b);
    case IndexOp::Ge: return x(e.a) + " >= " + x(e.b);
    case IndexOp::Eq: return x(e.a) + " == " + x(e.b);
    case IndexOp::And: return x(e.a) + " && " + x(e.b);
    case IndexOp::Select: return x(e.a) + " ? " + x(e.b) + " : " + x(e.c);
  }
  return "";
}

// A value-dependent node is written inline where it is used, after the values it reads.
std::string index_expr(const LoopNest& nest, int id, const std::vector<std::string>& vars) {
  const IndexExpr& e = nest.indices[id];
  switch (e.op) {
    case IndexOp::Var: return vars.at(static_cast<size_t>(e.value));
    case IndexOp::Const: return std::to_string(e.value);
    case IndexOp::Param: return field_name(static_cast<int>(e.value));
    default: return e.dynamic ? "(" + index_text(nest, id, vars) + ")" : "j" + std::to_string(id);
  }
}

std::string index_def(const LoopNest& nest, int id, const std::vector<std::string>& vars) {
  return nest.indices[id].dynamic ? "" : index_text(nest, id, vars);
}

const char* fn_name(OpKind op) {
  switch (op) {
    case OpKind::Abs: return "vf_abs";
    case OpKind::Neg: return "vf_neg";
    case OpKind::Exp: return "vf_exp";
    case OpKind::Exp2: return "vf_exp2";
    case OpKind::Expm1: return "vf_expm1";
    case OpKind::Log: return "vf_log";
    case OpKind::Log1p: return "vf_log1p";
    case OpKind::Log2: return "vf_log2";
    case OpKind::Log10: return "vf_log10";
    case OpKind::Sqrt: return "vf_sqrt";
    case OpKind::Rsqrt: return "vf_rsqrt";
    case OpKind::Reciprocal: return "vf_reciprocal";
    case OpKind::Sin: return "vf_sin";
    case OpKind::Cos: return "vf_cos";
    case OpKind::Tan: return "vf_tan";
    case OpKind::Tanh: return "vf_tanh";
    case OpKind::Sinh: return "vf_sinh";
    case OpKind::Cosh: return "vf_cosh";
    case OpKind::Asin: return "vf_asin";
    case OpKind::Acos: return "vf_acos";
    case OpKind::Atan: return "vf_atan";
    case OpKind::Erf: return "vf_erf";
    case OpKind::Erfc: return "vf_erfc";
    case OpKind::Erfinv: return "vf_erfinv";
    case OpKind::Acosh: return "vf_acosh";
    case OpKind::Asinh: return "vf_asinh";
    case OpKind::Atanh: return "vf_atanh";
    case OpKind::Lgamma: return "vf_lgamma";
    case OpKind::Digamma: return "vf_digamma";
    case OpKind::Erfcinv: return "vf_erfcinv";
    case OpKind::Ndtri: return "vf_ndtri";
    case OpKind::Sign: return "vf_sign";
    case OpKind::Floor: return "vf_floor";
    case OpKind::Ceil: return "vf_ceil";
    case OpKind::Round: return "vf_round";
    case OpKind::Trunc: return "vf_trunc";
    case OpKind::IsFinite: return "vf_isfinite";
    case OpKind::BitwiseNot: return "vf_bitwise_not";
    case OpKind::Signbit: return "vf_signbit";
    case OpKind::FrexpMantissa: return "vf_frexp_mantissa";
    case OpKind::FrexpExponent: return "vf_frexp_exponent";
    case OpKind::Add: return "vf_add";
    case OpKind::Sub: return "vf_sub";
    case OpKind::Mul: return "vf_mul";
    case OpKind::Div: return "vf_div";
    case OpKind::Pow: return "vf_pow";
    case OpKind::Maximum: return "vf_maximum";
    case OpKind::Minimum: return "vf_minimum";
    case OpKind::Fmod: return "vf_fmod";
    case OpKind::Remainder: return "vf_remainder";
    case OpKind::Atan2: return "vf_atan2";
    case OpKind::Nextafter: return "vf_nextafter";
    case OpKind::Zeta: return "vf_zeta";
    case OpKind::BitwiseLeftShift: return "vf_shl";
    case OpKind::BitwiseRightShift: return "vf_shr";
    case OpKind::Lerp: return "vf_lerp";
    default: return nullptr;
  }
}

std::string apply_expr(const ValueExpr& e, const std::vector<std::string>& x) {
  const char* ct = compute_type(e.dtype);
  switch (e.fn) {
    case OpKind::Eq: return "(" + x[0] + " == " + x[1] + ")";
    case OpKind::Ne: return "(" + x[0] + " != " + x[1] + ")";
    case OpKind::Lt: return "(" + x[0] + " < " + x[1] + ")";
    case OpKind::Le: return "(" + x[0] + " <= " + x[1] + ")";
    case OpKind::Gt: return "(" + x[0] + " > " + x[1] + ")";
    case OpKind::Ge: return "(" + x[0] + " >= " + x[1] + ")";
    case OpKind::BitwiseAnd: return std::string("(") + ct + ")(" + x[0] + " & " + x[1] + ")";
    case OpKind::BitwiseOr: return std::string("(") + ct + ")(" + x[0] + " | " + x[1] + ")";
    case OpKind::BitwiseXor: return std::string("(") + ct + ")(" + x[0] + " ^ " + x[1] + ")";
    case OpKind::Where: return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
    default: break;
  }
  const char* fn = fn_name(e.fn);
  VF_INTERNAL_CHECK(fn != nullptr, "no emitted function for prims.", op_name(e.fn));
  std::string call = std::string(fn) + "(";
  for (size_t i = 0; i < x.size(); ++i) call += (i ? ", " : "") + x[i];
  call += ")";
  // Ops that give bool (isfinite, signbit) need no rounding, nor do negation, absolute value and
  // frexp's mantissa (exact: their operand is a value of the type); others round half results.
  const bool exact = e.fn == OpKind::Neg || e.fn == OpKind::Abs || e.fn == OpKind::FrexpMantissa;
  return e.dtype == e.operand_dtype && !exact ? rounded(e.dtype, call) : call;
}

}  // namespace

std::string from_memory(DType dtype, const std::string& elem) {
  switch (dtype) {
    case DType::Bool: return "(" + elem + " != 0)";
    case DType::Float16: return "vf_f16_bits_to_f32(" + elem + ")";
    case DType::BFloat16: return "vf_bf16_bits_to_f32(" + elem + ")";
    default: return elem;
  }
}

namespace {

}  // namespace

std::string load_expr(DType dtype, const std::string& ptr, const std::string& index) {
  return from_memory(dtype, std::string("((const ") + memory_type(dtype) + "*)" + ptr + ")[" + index + "]");
}

std::string store_value(DType dtype, const std::string& v) {
  switch (dtype) {
    case DType::Bool: return "(vf_u8)" + v;
    case DType::Float16: return "vf_f32_to_f16_bits(" + v + ")";
    case DType::BFloat16: return "vf_f32_to_bf16_bits(" + v + ")";
    default: return v;
  }
}

std::string store_value(const LoopNest& nest, const StoreStmt& s) {
  // A cast of a float to the stored half type rounds as the store does: store the float.
  const ValueExpr& e = nest.values[s.value];
  const bool same_rounding = e.op == ValueOp::Cast && e.dtype == s.dtype && is_half(s.dtype) &&
                             std::string_view(compute_type(e.operand_dtype)) == "float";
  return store_value(s.dtype, "v" + std::to_string(same_rounding ? e.args[0] : s.value));
}

const char* compute_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "vf_u8";
    case DType::Int8: return "vf_i8";
    case DType::Int16: return "vf_i16";
    case DType::Int32: return "vf_i32";
    case DType::Int64: return "vf_i64";
    case DType::Float16: return "float";
    case DType::BFloat16: return "float";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "float";
}

const char* memory_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "vf_u8";
    case DType::Float16: return "vf_u16";
    case DType::BFloat16: return "vf_u16";
    case DType::UInt8: case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::Float32: case DType::Float64:
      return compute_type(dtype);
  }
  return "float";
}

bool is_baked_field(const AbiField& f) {
  switch (f.kind) {
    case AbiFieldKind::InputData: case AbiFieldKind::OutputData: case AbiFieldKind::ScalarF64: case AbiFieldKind::ScalarI64:
    case AbiFieldKind::IndexError:
      return false;
    default:
      return true;
  }
}

namespace {

// A baked field's value in the packed block `block`, as a C constant of its type.
std::string baked_value(const AbiField& f, const std::byte* block) {
  const int64_t v = abi_int_field(f, block);
  if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + (f.type == AbiFieldType::I64 ? "LL" : "");
}

}  // namespace

void emit_args_struct(const KernelAbi& abi, std::string& out, const std::byte* baked, bool aligned_pointers) {
  std::vector<size_t> order(abi.fields.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return abi.fields[x].offset < abi.fields[y].offset; });
  // A baked field keeps its bytes in the block as member f<k>_launch, which the kernel does not read.
  auto member = [&](size_t k) {
    return "f" + std::to_string(k) + (baked && is_baked_field(abi.fields[k]) ? "_launch" : "");
  };
  out += "struct VfArgs {\n";
  if (order.empty()) out += "  vf_i64 unused;\n";
  for (size_t k : order) {
    const AbiField& f = abi.fields[k];
    const char* type = "vf_i64";
    switch (f.type) {
      case AbiFieldType::Ptr:
        type = aligned_pointers && f.kind != AbiFieldKind::IndexError ? "vf_ptr16" : "void*";
        break;
      case AbiFieldType::I64: type = "vf_i64"; break;
      case AbiFieldType::I32: type = "vf_i32"; break;
      case AbiFieldType::F64: type = "double"; break;
    }
    if (baked && is_baked_field(f))
      out += std::string("  static constexpr ") + type + " f" + std::to_string(k) + " = " + baked_value(f, baked) + ";\n";
    out += std::string("  ") + type + " " + member(k) + ";\n";
  }
  out += "};\n";
  out += "static_assert(sizeof(VfArgs) == " + std::to_string(abi.size) + ", \"VfArgs size\");\n";
  for (size_t k : order)
    out += "VF_CHECK_OFFSET(VfArgs, " + member(k) + ", " + std::to_string(abi.fields[k].offset) + ")\n";
}

void emit_position_unravel(const std::vector<std::string>& vars, size_t first, size_t end, const std::string& size_prefix,
                           const std::string& rest, const std::string& decl, const std::string& indent, std::string& out,
                           size_t skip) {
  const size_t outermost = first == skip ? first + 1 : first;
  for (size_t d = end; d-- > first;) {
    if (d == skip) continue;
    const std::string size = size_prefix + std::to_string(d);
    if (d > outermost)
      out += indent + decl + vars[d] + " = " + rest + " % " + size + ";\n" + indent + rest + " /= " + size + ";\n";
    else
      out += indent + decl + vars[d] + " = " + rest + ";\n";
  }
}

void emit_walked_line(const LoopNest& nest, const std::vector<std::string>& vars, const std::string& size_prefix,
                      const char* index_type, std::string& out) {
  const auto along = static_cast<size_t>(nest.walk_dim);
  emit_position_unravel(vars, 0, vars.size(), size_prefix, "rest", std::string("const ") + index_type + " ", "      ",
                        out, along);
  out += "      (void)rest;\n";
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (nest.values[id].op == ValueOp::Scanned)
      out += std::string("      ") + compute_type(nest.values[id].dtype) + " sc" + std::to_string(id) + " = 0;\n";
  const std::string& v = vars[along];
  out += std::string("      for (") + index_type + " " + v + " = 0; " + v + " < " + size_prefix + std::to_string(along) +
         "; ++" + v + ") {\n";
  emit_nest_body(nest, vars, index_type, "        ", out);
  out += "      }\n";
}

std::string index_ref(const LoopNest& nest, int id, const std::vector<std::string>& vars) {
  return index_expr(nest, id, vars);
}

void emit_index_defs(const LoopNest& nest, const std::vector<int>& roots, const std::vector<std::string>& vars,
                     const char* index_type, const std::string& indent, std::string& out) {
  std::vector<char> need(nest.indices.size(), 0);
  std::vector<int> stack = roots;
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id < 0 || need[id]) continue;
    need[id] = 1;
    const IndexExpr& e = nest.indices[id];
    if (e.op == IndexOp::Var || e.op == IndexOp::Const || e.op == IndexOp::Param) continue;
    stack.insert(stack.end(), {e.a, e.b, e.c});
  }
  for (size_t id = 0; id < nest.indices.size(); ++id) {
    if (!need[id]) continue;
    const std::string def = index_def(nest, static_cast<int>(id), vars);
    if (!def.empty()) out += indent + "const " + index_type + " j" + std::to_string(id) + " = " + def + ";\n";
  }
}

namespace {

std::string value_def(const LoopNest& nest, int id, const std::vector<std::string>& vars, const std::string& flat,
                      const std::unordered_map<int, std::string>* value_override) {
  const ValueExpr& e = nest.values[id];
  if (e.op != ValueOp::Load && value_override && value_override->count(id)) return value_override->at(id);
  auto ix = [&](int k) { return index_expr(nest, k, vars); };
  std::vector<std::string> x;
  for (int a : e.args) x.push_back("v" + std::to_string(a));
  std::string def;
  switch (e.op) {
    case ValueOp::Load: {
      const bool from_pack = value_override && value_override->count(id);
      if (from_pack)
        def = value_override->at(id);
      else if (flat == kVectorLane)
        def = from_memory(e.dtype, "p" + std::to_string(id) + ".e[lane]");
      else
        def = load_expr(e.dtype, field_name(e.param),
                        flat.empty() ? ix(e.index) : field_name(e.flat_offset) + " + " + flat);
      // A value read from a pack needs no guard when the guard only says whether it is used.
      if (e.pred >= 0 && !(from_pack && e.pred_in_bounds))
        def = "(" + ix(e.pred) + " ? " + def + " : (" + compute_type(e.dtype) + ")0)";
      break;
    }
    case ValueOp::Scalar: def = convert(e.dtype, field_name(e.param)); break;
    case ValueOp::Constant: def = convert(e.dtype, scalar_literal(e.constant)); break;
    case ValueOp::Iota:
      def = "(vf_i64)" + ix(e.index);
      if (e.iota_step != 1) def += " * " + int_literal(e.iota_step);
      if (e.iota_start != 0) def = int_literal(e.iota_start) + " + " + def;
      def = convert(e.dtype, "(" + def + ")");
      break;
    case ValueOp::Uniform:
      def = std::string(e.dtype == DType::Float64 ? "vf_uniform_f64(" : "vf_uniform_f32(") + x[0] + ", " + x[1] +
            ", (vf_i64)" + ix(e.index) + ")";
      break;
    case ValueOp::Apply: def = apply_expr(e, x); break;
    case ValueOp::OnePlusTanh: def = "vf_one_plus_tanh(" + std::string(e.fn == OpKind::Sub ? "-" : "") + x[0] + ")"; break;
    case ValueOp::HalfXOnePlusTanh: def = "vf_half_x_one_plus_tanh(" + x[0] + ", " + x[1] + ")"; break;
    case ValueOp::Cast: def = convert(e.dtype, x[0]); break;
    case ValueOp::Select: def = "(" + ix(e.pred) + " ? " + x[0] + " : " + x[1] + ")"; break;
    case ValueOp::Reduced: def = convert(e.dtype, "acc" + std::to_string(e.param)); break;
    case ValueOp::Scanned: def = "vf_scan_add(sc" + std::to_string(id) + ", " + x[0] + ")"; break;
  }
  return def;
}

}  // namespace

void emit_nest_body(const LoopNest& nest, const std::vector<std::string>& vars, const char* index_type,
                    const std::string& indent, std::string& out, const std::string& flat,
                    const std::unordered_map<int, std::string>* value_override,
                    const std::unordered_map<int, std::string>* index_override) {
  auto overridden = [&](int id) { return value_override && value_override->count(id); };
  auto index_overridden = [&](int id) { return index_override && index_override->count(id); };
  VF_INTERNAL_CHECK(flat.empty() || nest.flat, "flat emission of a nest that is not flat");
  // In flat emission an access at offset field f is `a.f + flat`.
  auto flat_index = [&](int offset_field) { return field_name(offset_field) + " + " + flat; };
  // Mark what the stores need.
  std::vector<char> need_index(nest.indices.size(), 0), need_value(nest.values.size(), 0);
  auto mark_index = [&](auto& self, int id) -> void {
    if (id < 0 || need_index[id]) return;
    need_index[id] = 1;
    const IndexExpr& e = nest.indices[id];
    if (e.op == IndexOp::Var || e.op == IndexOp::Const || e.op == IndexOp::Param || index_overridden(id)) return;
    self(self, e.a);
    self(self, e.b);
    self(self, e.c);
  };
  std::vector<int> stack;
  for (const StoreStmt& s : nest.stores) {
    if (flat.empty()) mark_index(mark_index, s.index);
    mark_index(mark_index, s.pred);
    stack.push_back(s.value);
    // A scatter's address and guard read the index's value (inline).
    nest.gathered_values(s.index, stack);
    nest.gathered_values(s.pred, stack);
  }
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (need_value[id]) continue;
    need_value[id] = 1;
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load || (flat.empty() && !overridden(id))) mark_index(mark_index, e.index);
    mark_index(mark_index, e.pred);
    for (int a : e.args) stack.push_back(a);
    // An address or guard that reads a gathered index (inline, also in an override) needs its value.
    nest.gathered_values(e.index, stack);
    nest.gathered_values(e.pred, stack);
  }
  for (size_t id = 0; id < nest.indices.size(); ++id) {
    if (!need_index[id]) continue;
    const std::string def =
        index_overridden(static_cast<int>(id)) ? index_override->at(static_cast<int>(id)) : index_def(nest, static_cast<int>(id), vars);
    if (def.empty()) continue;
    out += indent + "const " + index_type + " j" + std::to_string(id) + " = " + def + ";\n";
  }
  for (size_t id = 0; id < nest.values.size(); ++id) {
    if (!need_value[id]) continue;
    const ValueExpr& e = nest.values[id];
    out += indent + "const " + compute_type(e.dtype) + " v" + std::to_string(id) + " = " +
           value_def(nest, static_cast<int>(id), vars, flat, value_override) + ";\n";
  }
  auto ix = [&](int id) { return index_expr(nest, id, vars); };
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    const StoreStmt& s = nest.stores[k];
    if (flat == kVectorLane) {
      out += indent + "s" + std::to_string(k) + ".e[lane] = " + store_value(nest, s) + ";\n";
      continue;
    }
    if (s.accumulate) {
      VF_INTERNAL_CHECK(flat.empty(), "a scatter's store in a flat or vector emission");
      const char* fn = s.op == OpKind::Amax ? "vf_accumulate_max((" : "vf_accumulate((";
      out += indent + (s.pred >= 0 ? "if (" + ix(s.pred) + ") " : "") + fn + memory_type(s.dtype) + "*)" +
             field_name(s.param) + " + " + ix(s.index) + ", " + store_value(nest, s) + ");\n";
      continue;
    }
    out += indent + "((" + memory_type(s.dtype) + "*)" + field_name(s.param) + ")[" +
           (flat.empty() ? ix(s.index) : flat_index(s.flat_offset)) + "] = " +
           store_value(nest, s) + ";\n";
  }
}

}  // namespace vf

namespace vf {

ScopedEmitter::ScopedEmitter(const LoopNest& nest, std::vector<std::string> vars, const char* index_type)
    : nest_(nest), vars_(std::move(vars)), index_type_(index_type) {
  nest.scope_of_values(inner_value_, ready_);
  reciprocal_.assign(nest.values.size(), 0);
  divides_by_reciprocal_.assign(nest.values.size(), 0);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op == ValueOp::Apply && e.fn == OpKind::Div && is_floating(e.dtype) && e.dtype == e.operand_dtype &&
        inner_value_[id] && !inner_value_[e.args[1]]) {
      divides_by_reciprocal_[id] = 1;
      reciprocal_[e.args[1]] = 1;
    }
  }
  const auto row_rank = static_cast<int64_t>(nest.extents.size());
  inner_index_.resize(nest.indices.size());
  for (size_t id = 0; id < nest.indices.size(); ++id)
    inner_index_[id] = nest.index_uses_vars_from(static_cast<int>(id), row_rank);
  defined_index_.assign(nest.indices.size(), 0);
  defined_value_.assign(nest.values.size(), 0);
}

void ScopedEmitter::define(const std::vector<int>& values, const std::vector<int>& indices, bool outer_only,
                           const std::string& indent, std::string& out,
                           const std::unordered_map<int, std::string>* value_override) {
  std::vector<char> need_index(nest_.indices.size(), 0), need_value(nest_.values.size(), 0);
  auto mark_index = [&](auto& self, int id) -> void {
    if (id < 0 || need_index[id] || defined_index_[id]) return;
    need_index[id] = 1;
    const IndexExpr& e = nest_.indices[id];
    if (e.op == IndexOp::Var || e.op == IndexOp::Const || e.op == IndexOp::Param) return;
    self(self, e.a);
    self(self, e.b);
    self(self, e.c);
  };
  for (int id : indices) mark_index(mark_index, id);
  std::vector<int> stack = values;
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (need_value[id] || defined_value_[id]) continue;
    need_value[id] = 1;
    const ValueExpr& e = nest_.values[id];
    const bool overridden = value_override && value_override->count(id);
    if (overridden && e.op != ValueOp::Load) continue;  // replaced whole: needs nothing
    if (!overridden) mark_index(mark_index, e.index);
    mark_index(mark_index, e.pred);
    for (int a : e.args) stack.push_back(a);
    nest_.gathered_values(e.index, stack);
    nest_.gathered_values(e.pred, stack);
  }
  // Inner nodes are walked through (what they need may be outer) but, with outer_only, not defined.
  for (size_t id = 0; id < nest_.indices.size(); ++id) {
    if (!need_index[id] || (outer_only && inner_index_[id])) continue;
    defined_index_[id] = 1;
    const std::string def = index_def(nest_, static_cast<int>(id), vars_);
    if (!def.empty()) out += indent + "const " + index_type_ + " j" + std::to_string(id) + " = " + def + ";\n";
  }
  for (size_t id = 0; id < nest_.values.size(); ++id) {
    if (!need_value[id] || (outer_only && inner_value_[id])) continue;
    defined_value_[id] = 1;
    const ValueExpr& e = nest_.values[id];
    const std::string type = compute_type(e.dtype), v = "v" + std::to_string(id);
    std::string def = value_def(nest_, static_cast<int>(id), vars_, "", value_override);
    if (divides_by_reciprocal_[id] && !(value_override && value_override->count(static_cast<int>(id)))) {
      const bool fast = !exact_flag.empty() && std::string(type) == "float";
      def = rounded(e.dtype, std::string(fast ? "vf_div_r_fast(v" : "vf_div_r(v") + std::to_string(e.args[0]) + ", v" +
                                 std::to_string(e.args[1]) + ", r" + std::to_string(e.args[1]) +
                                 (fast ? ", " + exact_flag : "") + ")");
      fast_divisions += fast;
    }
    out += indent + "const " + type + " " + v + " = " + def + ";\n";
    if (reciprocal_[id]) out += indent + "const " + type + " r" + std::to_string(id) + " = (" + type + ")1 / " + v + ";\n";
  }
}

std::string ScopedEmitter::index(int id) const { return index_expr(nest_, id, vars_); }

std::string ScopedEmitter::store(const StoreStmt& s) const {
  return "((" + std::string(memory_type(s.dtype)) + "*)" + field_name(s.param) + ")[" + index(s.index) +
         "] = " + store_value(nest_, s) + ";\n";
}

std::string ScopedEmitter::column_store(const StoreStmt& s, const std::string& first) const {
  const std::string mem = memory_type(s.dtype), v = "v" + std::to_string(s.value);
  ReduceStmt r;
  r.op = s.op;
  r.acc_dtype = s.dtype;
  const std::string combined = "(" + first + ") ? (" + compute_type(s.dtype) + ")" + v + " : " +
                               reduce_combine(r, from_memory(s.dtype, "e"), v);
  const std::string stored = is_half(s.dtype) ? store_value(s.dtype, "(" + combined + ")") : "(" + mem + ")(" + combined + ")";
  return "{ " + mem + "& e = ((" + mem + "*)" + field_name(s.param) + ")[" + index(s.index) + "]; e = " + stored + "; }\n";
}

void emit_reduction_row(const LoopNest& nest, ScopedEmitter& em, const ReductionRowHooks& hooks,
                        const std::string& indent, std::string& out) {
  for (int phase = 0; phase < nest.phase_count(); ++phase) {
    const std::vector<int> operands = nest.phase_operands(phase);
    em.define(operands, {}, true, indent, out);
    for (size_t k = 0; k < nest.reductions.size(); ++k) {
      const ReduceStmt& r = nest.reductions[k];
      if (r.phase == phase)
        out += indent + compute_type(r.acc_dtype) + " acc" + std::to_string(k) + " = " + reduce_identity(r) + ";\n";
    }
    hooks.inner_loop([&](const std::string& in) {
      em.define(operands, {}, false, in, out, hooks.value_override);
      for (size_t k = 0; k < nest.reductions.size(); ++k) {
        const ReduceStmt& r = nest.reductions[k];
        if (r.phase != phase) continue;
        const bool grouped = !hooks.group_accumulator.empty();
        const std::string acc = (grouped ? hooks.group_accumulator : "acc") + std::to_string(k);
        const std::string step = reduce_combine(r, acc, "v" + std::to_string(r.value));
        const bool guard = !grouped && !hooks.element_guard.empty();
        out += in + acc + " = " + (guard ? hooks.element_guard + " ? " + step + " : " + acc : step) + ";\n";
      }
    });
    if (hooks.after_phase) hooks.after_phase(phase);
  }
  for (const bool row : {false, true}) {
    auto overridden = [&](size_t k) { return hooks.store_override && hooks.store_override->count(static_cast<int>(k)); };
    std::vector<int> values, indices;
    for (size_t k = 0; k < nest.stores.size(); ++k) {
      const StoreStmt& s = nest.stores[k];
      if (s.row != row) continue;
      values.push_back(s.value);
      if (!overridden(k)) indices.push_back(s.index);
    }
    if (values.empty()) continue;
    em.define(values, indices, true, indent, out);
    auto stores = [&](const std::string& in) {
      em.define(values, indices, false, in, out, hooks.value_override);
      const std::string guard = row || hooks.element_guard.empty() ? "" : "if (" + hooks.element_guard + ") ";
      for (size_t k = 0; k < nest.stores.size(); ++k) {
        const StoreStmt& s = nest.stores[k];
        if (s.row != row) continue;
        if (overridden(k))
          out += in + hooks.store_override->at(static_cast<int>(k)) + "\n";
        else
          out += in + guard + (s.column ? em.column_store(s, hooks.column_first) : em.store(s));
      }
    };
    if (!row) {
      hooks.inner_loop(stores);
    } else if (hooks.row_guard.empty()) {
      stores(indent);
    } else {
      out += indent + hooks.row_guard + " {\n";
      stores(indent + "  ");
      out += indent + "}\n";
    }
  }
}

std::string reduce_identity(const ReduceStmt& r) {
  const DType t = r.acc_dtype;
  switch (r.op) {
    case OpKind::Sum: return std::string("(") + compute_type(t) + ")0";
    case OpKind::Prod: return std::string("(") + compute_type(t) + ")1";
    case OpKind::Amax: case OpKind::Amin: {
      const bool max = r.op == OpKind::Amax;
      if (is_floating(t)) return std::string(max ? "-" : "") + "(" + compute_type(t) + ")vf_bits_f64(0x7ff0000000000000ull)";
      if (t == DType::Bool) return max ? "false" : "true";
      if (t == DType::UInt8) return max ? "(vf_u8)0" : "(vf_u8)255";
      const int64_t bits = 8 * dtype_size(t) - 1;
      const int64_t hi = static_cast<int64_t>((uint64_t{1} << bits) - 1);
      return max ? "(" + std::string(compute_type(t)) + ")(" + int_literal(-hi) + " - 1)"
                 : "(" + std::string(compute_type(t)) + ")" + int_literal(hi);
    }
    default: VF_INTERNAL_ERROR("reduce_identity: prims.", op_name(r.op), " is not a combining reduction");
  }
}

std::string reduce_combine(const ReduceStmt& r, const std::string& acc, const std::string& x) {
  const bool wrap = is_integral(r.acc_dtype);
  switch (r.op) {
    case OpKind::Sum:
      return wrap ? "(vf_i64)((vf_u64)" + acc + " + (vf_u64)" + x + ")" : acc + " + " + x;
    case OpKind::Prod:
      return wrap ? "(vf_i64)((vf_u64)" + acc + " * (vf_u64)" + x + ")" : acc + " * " + x;
    case OpKind::Amax: return "vf_reduce_max(" + acc + ", " + x + ")";
    case OpKind::Amin: return "vf_reduce_min(" + acc + ", " + x + ")";
    default: VF_INTERNAL_ERROR("reduce_combine: prims.", op_name(r.op), " is not a combining reduction");
  }
}

}  // namespace vf
