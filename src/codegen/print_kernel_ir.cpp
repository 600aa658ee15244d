// print_kernel_ir and print_schedule: the kernel IR and its schedule as text.
#include "codegen/print_kernel_ir.h"

#include <cstdio>

#include "base/error.h"

namespace vf {
namespace {

std::string field_ref(int k) { return "f" + std::to_string(k); }

std::string field_text(const AbiField& f) {
  const std::string a = std::to_string(f.a), b = std::to_string(f.b);
  switch (f.kind) {
    case AbiFieldKind::InputData: return "in" + a + ".data";
    case AbiFieldKind::OutputData: return "out" + a + ".data";
    case AbiFieldKind::InputSize: return "in" + a + ".size[" + b + "]";
    case AbiFieldKind::InputStride: return "in" + a + ".stride[" + b + "]";
    case AbiFieldKind::InputOffset: return "in" + a + ".offset";
    case AbiFieldKind::OutputSize: return "out" + a + ".size[" + b + "]";
    case AbiFieldKind::OutputStride: return "out" + a + ".stride[" + b + "]";
    case AbiFieldKind::OutputOffset: return "out" + a + ".offset";
    case AbiFieldKind::ViewStride: return "view" + a + ".stride[" + b + "]";
    case AbiFieldKind::ViewOffset: return "view" + a + ".offset";
    case AbiFieldKind::Constant: return "const " + std::to_string(f.value);
    case AbiFieldKind::ScalarF64: return "in" + a + " (f64)";
    case AbiFieldKind::ScalarI64: return "in" + a + " (i64)";
    case AbiFieldKind::Divider: return "divider of ceil(f" + a + " / " + b + ")";
    case AbiFieldKind::IndexError: return "index error slot";
  }
  return "?";
}

std::string list(const std::vector<int>& fields) {
  std::string s;
  for (int k : fields) s += (s.empty() ? "" : ", ") + field_ref(k);
  return "[" + s + "]";
}

std::string scalar_text(const Scalar& s) {
  if (s.kind != ScalarKind::Float) return std::to_string(s.i);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", s.f);
  return buf;
}

class NestPrinter {
 public:
  NestPrinter(const KernelIR& ir, const LoopNest& nest) : ir_(ir), nest_(nest) {}

  std::string index(int id) const {
    const IndexExpr& e = nest_.indices.at(static_cast<size_t>(id));
    switch (e.op) {
      case IndexOp::Var: return "i" + std::to_string(e.value);
      case IndexOp::Const: return std::to_string(e.value);
      case IndexOp::Param: return field_ref(static_cast<int>(e.value));
      default: return "j" + std::to_string(id);
    }
  }

  std::string index_def(const IndexExpr& e) const {
    auto x = [&](int k) { return index(k); };
    switch (e.op) {
      case IndexOp::Add: return x(e.a) + " + " + x(e.b);
      case IndexOp::Sub: return x(e.a) + " - " + x(e.b);
      case IndexOp::Mul: return x(e.a) + " * " + x(e.b);
      case IndexOp::Div: return x(e.a) + " / " + x(e.b);
      case IndexOp::Mod: return x(e.a) + " % " + x(e.b);
      case IndexOp::Min: return "min(" + x(e.a) + ", " + x(e.b) + ")";
      case IndexOp::Lt: return x(e.a) + " < " + x(e.b);
      case IndexOp::Ge: return x(e.a) + " >= " + x(e.b);
      case IndexOp::Eq: return x(e.a) + " == " + x(e.b);
      case IndexOp::And: return x(e.a) + " && " + x(e.b);
      case IndexOp::Select: return x(e.a) + " ? " + x(e.b) + " : " + x(e.c);
      case IndexOp::Gathered:
        return "index v" + std::to_string(e.value) + " in [0, " + x(e.a) + "), gather #" + x(e.c);
      case IndexOp::Var: case IndexOp::Const: case IndexOp::Param: return "";
    }
    return "";
  }

  std::string args(const ValueExpr& e) const {
    std::string s;
    for (int a : e.args) s += (s.empty() ? "v" : ", v") + std::to_string(a);
    return s;
  }

  std::string value_def(const ValueExpr& e) const {
    const std::string dtype(dtype_short_name(e.dtype));
    switch (e.op) {
      case ValueOp::Load: {
        std::string s = "load " + dtype + " in" + std::to_string(ir_.abi.fields.at(static_cast<size_t>(e.param)).a) + " " +
                        field_ref(e.param) + "[" + index(e.index) + "]";
        if (e.pred >= 0) s += " if " + index(e.pred) + (e.pred_in_bounds ? " (address valid either way)" : "");
        if (e.unit_var >= 0) s += "  unit i" + std::to_string(e.unit_var);
        if (e.row_var >= 0) s += "  row i" + std::to_string(e.row_var);
        return s;
      }
      case ValueOp::Scalar: return "scalar " + dtype + " " + field_ref(e.param);
      case ValueOp::Constant: return "const " + dtype + " " + scalar_text(e.constant);
      case ValueOp::Iota:
        return "iota " + dtype + " " + std::to_string(e.iota_start) + " + " + index(e.index) + " * " +
               std::to_string(e.iota_step);
      case ValueOp::Uniform:
        return "uniform " + dtype + " at " + index(e.index) + " seed v" + std::to_string(e.args.at(0)) + " offset v" +
               std::to_string(e.args.at(1));
      case ValueOp::Apply: {
        std::string s = std::string(op_name(e.fn)) + " " + dtype;
        if (e.operand_dtype != e.dtype) s += " of " + std::string(dtype_short_name(e.operand_dtype));
        return s + "(" + args(e) + ")";
      }
      case ValueOp::Cast:
        return "cast " + std::string(dtype_short_name(e.operand_dtype)) + " -> " + dtype + " " + args(e);
      case ValueOp::Select:
        return "select " + dtype + " " + index(e.pred) + " ? v" + std::to_string(e.args.at(0)) + " : v" +
               std::to_string(e.args.at(1));
      case ValueOp::Reduced: return "reduced " + dtype + " r" + std::to_string(e.param);
      case ValueOp::OnePlusTanh:
        return std::string(e.fn == OpKind::Sub ? "one_minus_tanh " : "one_plus_tanh ") + dtype + "(" + args(e) + ")";
      case ValueOp::HalfXOnePlusTanh: return "half_x_one_plus_tanh " + dtype + "(" + args(e) + ")";
      case ValueOp::Scanned: return "scanned " + dtype + " running sum(" + args(e) + ")";
    }
    return "?";
  }

  void print(int n, std::string& out) const {
    const AbiNest& abi = ir_.abi.nests.at(static_cast<size_t>(n));
    out += "nest #" + std::to_string(n);
    if (nest_.is_reduction())
      out += " reduction: rows " + list(nest_.extents) + (nest_.serial ? " (the last serial)" : "") + ", reduced " +
             list(nest_.inner_extents) + ", " + std::to_string(nest_.phase_count()) + " phase(s)\n";
    else if (nest_.scatter)
      out += " scatter over the index " + list(nest_.extents) +
             (nest_.stores.at(0).op == OpKind::Amax ? ", the largest into out" : ", adding into out") +
             std::to_string(ir_.abi.fields.at(static_cast<size_t>(nest_.stores.at(0).param)).a) +
             (nest_.stores.at(0).op == OpKind::Amax ? " (filled with the base first)\n" : " (zeroed first)\n");
    else if (nest_.scan)
      out += " scan over " + list(nest_.extents) + ", " + std::to_string(abi.rows) + " line(s) along i" +
             std::to_string(nest_.walk_dim) + ", each walked in order\n";
    else
      out += " pointwise over out" + std::to_string(abi.output) + " " + list(nest_.extents) + (nest_.flat ? ", flat" : "") +
             "\n";
    for (size_t id = 0; id < nest_.indices.size(); ++id) {
      const std::string def = index_def(nest_.indices[id]);
      if (!def.empty()) out += "  j" + std::to_string(id) + " = " + def + "\n";
    }
    for (size_t id = 0; id < nest_.values.size(); ++id)
      out += "  v" + std::to_string(id) + " = " + value_def(nest_.values[id]) + "\n";
    for (size_t k = 0; k < nest_.reductions.size(); ++k) {
      const ReduceStmt& r = nest_.reductions[k];
      out += "  r" + std::to_string(k) + " = " + std::string(op_name(r.op)) + " " +
             std::string(dtype_short_name(r.acc_dtype)) + " of v" + std::to_string(r.value) + ", phase " +
             std::to_string(r.phase) + "\n";
    }
    for (const StoreStmt& s : nest_.stores)
      out += "  " + std::string(s.pred >= 0 ? "if " + index(s.pred) + ": " : "") + "store out" +
             std::to_string(ir_.abi.fields.at(static_cast<size_t>(s.param)).a) + " " +
             std::string(dtype_short_name(s.dtype)) + " " + field_ref(s.param) + "[" + index(s.index) +
             (!s.accumulate ? "] = v" : s.op == OpKind::Amax ? "] max= v" : "] += v") +
             std::to_string(s.value) + (s.row ? " (row)" : "") +
             (s.column ? " (column " + std::string(op_name(s.op)) + " over the serial dim)" : "") + "\n";
  }

 private:
  const KernelIR& ir_;
  const LoopNest& nest_;
};

std::string flagged(const std::vector<char>& flags, const char* prefix) {
  std::string s;
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) s += (s.empty() ? "" : " ") + std::string(prefix) + std::to_string(i);
  return s.empty() ? "none" : s;
}

std::string vector_text(const VectorSchedule& v) {
  std::string s = "packs of " + std::to_string(v.v) + ", " + std::to_string(v.u) + " per thread (loads " +
                  flagged(v.loads, "v") + ")";
  if (v.row_tile >= 0)
    s += ", row tile i" + std::to_string(v.row_tile) + " in runs of " + std::to_string(1 << v.row_tile_log);
  return s;
}

std::string tile_text(const TileSchedule& t) {
  std::string loads;
  for (int id : t.loads) loads += (loads.empty() ? "v" : " v") + std::to_string(id);
  std::string s = "tiles of " + std::to_string(t.side) + " x " + std::to_string(t.side) + " along i" +
                  std::to_string(t.dim) + " (loads " + loads + " through shared memory), " + std::to_string(t.rows) +
                  " rows a pass, " + std::to_string(t.per_thread) + " per thread, " + (t.staged ? "staged" : "unstaged");
  if (t.packed)
    s += ", packed variant: packs of " + std::to_string(t.packed->v) + ", " + std::to_string(t.packed->rows) +
         " rows a pass (innermost loads " + flagged(t.packed->last, "v") + ")";
  return s;
}

std::string reduction_text(const ReductionSchedule& r, int team) {
  if (r.slices > 0) return "tiles of 32 rows, a lane per row and " + std::to_string(r.slices) + " slice(s) of its elements";
  std::string s = "team of " + std::to_string(team);
  if (r.warps > 0) s += ", warp rows (" + std::to_string(r.warps) + " warps a chunk)";
  if (r.per_thread == 0) return s + ", a strided loop over the row";
  s += ", " + std::to_string(r.per_thread) + " elements a thread in registers in groups of " + std::to_string(r.vec) +
       " (packed loads " + flagged(r.packed, "v") + ", cached " + flagged(r.cached, "v") + ", of them preloaded " +
       flagged(r.preloaded, "v") + (r.preload_row_values ? ", row values preloaded" : "") + ", packed stores " +
       flagged(r.packed_store, "s") + "), " + std::to_string(r.registers) + " registers";
  return s;
}

}  // namespace

std::string print_kernel_ir(const KernelIR& ir) {
  std::string out = "fields\n";
  for (size_t k = 0; k < ir.abi.fields.size(); ++k)
    out += "  " + field_ref(static_cast<int>(k)) + " " + field_text(ir.abi.fields[k]) + "\n";
  for (size_t v = 0; v < ir.abi.views.size(); ++v) {
    const AbiView& view = ir.abi.views[v];
    std::string steps;
    for (const Node& step : view.steps) steps += (steps.empty() ? "" : ", ") + std::string(op_name(step.op));
    out += "view" + std::to_string(v) + " = in" + std::to_string(view.input) + " through " + steps + ": " +
           view.spec_view_layout.to_string() + "\n";
  }
  for (size_t n = 0; n < ir.nests.size(); ++n) NestPrinter(ir, ir.nests[n]).print(static_cast<int>(n), out);
  return out;
}

std::string print_schedule(const KernelIR& ir, const KernelSchedule& schedule) {
  VF_INTERNAL_CHECK(schedule.nests.size() == ir.nests.size(), "a schedule of ", schedule.nests.size(),
                    " nests for a kernel of ", ir.nests.size());
  const KernelAbi& abi = schedule.abi;
  std::string out;
  if (schedule.target == Target::Cpu) {
    out = "schedule cpu: 64-bit index math, the work items split across threads\n";
  } else {
    out = std::string("schedule cuda: ") + (abi.index32 ? "32" : "64") + "-bit index math, blocks of " +
          std::to_string(abi.block_size) + " threads";
    if (abi.blocks_per_sm > 0) out += ", " + std::to_string(abi.blocks_per_sm) + " per multiprocessor";
    out += "\n";
  }
  for (size_t k = ir.abi.fields.size(); k < abi.fields.size(); ++k)
    out += "  " + field_ref(static_cast<int>(k)) + " " + field_text(abi.fields[k]) + "\n";
  for (size_t n = 0; n < schedule.nests.size(); ++n) {
    const NestSchedule& s = schedule.nests[n];
    out += "  nest #" + std::to_string(n) + " " + nest_kind_name(s.kind);
    switch (s.kind) {
      case NestKind::Loop: break;
      case NestKind::Walk: out += ": a thread per line walks i" + std::to_string(ir.nests[n].walk_dim) + " in order"; break;
      case NestKind::FlatVector: case NestKind::RowVector: out += ": " + vector_text(s.vector); break;
      case NestKind::Tiled: out += ": " + tile_text(s.tile); break;
      case NestKind::Reduction:
        if (schedule.target == Target::Cuda) out += ": " + reduction_text(s.reduction, abi.nests[n].team);
        break;
    }
    if (abi.nests[n].grain > 0) out += ", grain " + std::to_string(abi.nests[n].grain);
    std::string dividers;
    for (int k : s.dividers)
      if (k >= 0) dividers += " " + field_ref(k);
    if (s.row_tile_divider >= 0) dividers += " " + field_ref(s.row_tile_divider) + " (row tile)";
    if (!dividers.empty()) out += ", dividers" + dividers;
    out += "\n";
  }
  return out;
}

const char* nest_kind_name(NestKind kind) {
  switch (kind) {
    case NestKind::Loop: return "loop";
    case NestKind::FlatVector: return "flat-vector";
    case NestKind::RowVector: return "row-vector";
    case NestKind::Tiled: return "tiled";
    case NestKind::Reduction: return "reduction";
    case NestKind::Walk: return "walk";
  }
  return "?";
}

}  // namespace vf
