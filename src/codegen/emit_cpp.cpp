// The CPU emitter: kernel IR to a C++ translation unit for the host compiler.
//
// The work items [0, cpu_extent) are the points of all loop nests, nest after nest, each nest's
// points in row-major order. An entry call covers [begin, end): a flat nest (every buffer
// contiguous in the loop order) is one plain loop over element positions; any other nest unravels
// its first point once and then walks the innermost dim in a plain loop, carrying into outer dims.
// A scatter nest is one work item, whose call walks all of its points in order; a scan nest has a
// work item per line, which walks the line in order.
#include "codegen/emit_source.h"

namespace vf {
namespace {

const char kPreludeCpu[] =
#include "codegen/prelude_cpu.inc"
    ;

// Opens the loop over this call's work items among the `count` items (a C expression, named
// `items`) of a nest, the earlier nests' items counted by `base`: item `item` from `lo` to `hi`,
// its number also in the mutable variable `rest`.
void open_item_loop(const std::string& items, const std::string& count, const std::string& item, std::string& out) {
  out += "    const vf_i64 " + items + " = " + count + ";\n";
  out += "    const vf_i64 lo = begin - base > 0 ? begin - base : 0;\n";
  out += "    const vf_i64 hi = end - base < " + items + " ? end - base : " + items + ";\n";
  out += "    base += " + items + ";\n";
  out += "    for (vf_i64 " + item + " = lo; " + item + " < hi; ++" + item + ") {\n";
  out += "      vf_i64 rest = " + item + ";\n";
}

// A reduction nest: each work item is a row (a serial nest: a chunk, its rows in order). Per row,
// one plain loop nest over the reduced dims per phase, then one for the full-shape and column
// stores, then the row stores.
void emit_reduction_nest(const LoopNest& nest, int n, std::string& out) {
  const size_t rank = nest.extents.size(), inner = nest.inner_extents.size();
  const size_t chunk_rank = nest.serial ? rank - 1 : rank;  // the dims the work items cover
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars;
  out += "  {\n";
  std::string rows = "1";
  for (size_t d = 0; d < rank + inner; ++d) {
    const int field = d < rank ? nest.extents[d] : nest.inner_extents[d - rank];
    out += "    const vf_i64 " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(field) + ";\n";
    if (d < chunk_rank) rows += " * " + p + "s" + std::to_string(d);
    vars.push_back(p + "i" + std::to_string(d));
  }
  open_item_loop("rows", rows, "row", out);
  emit_position_unravel(vars, 0, chunk_rank, p + "s", "rest", "const vf_i64 ", "      ", out);
  out += "      (void)rest;\n";
  std::string row_indent = "      ";
  if (nest.serial) {
    const std::string v = vars[rank - 1];
    out += row_indent + "for (vf_i64 " + v + " = 0; " + v + " < " + p + "s" + std::to_string(rank - 1) + "; ++" + v + ") {\n";
    row_indent += "  ";
  }
  ScopedEmitter em(nest, vars, "vf_i64");
  // The loops over the reduced dims, around `body` (emitted at the innermost indent).
  auto inner_loops = [&](const std::function<void(const std::string&)>& body) {
    std::string indent = row_indent;
    for (size_t d = rank; d < rank + inner; ++d) {
      out += indent + "for (vf_i64 " + vars[d] + " = 0; " + vars[d] + " < " + p + "s" + std::to_string(d) + "; ++" +
             vars[d] + ") {\n";
      indent += "  ";
    }
    out += indent + "{\n";
    const auto saved = em.save();
    body(indent + "  ");
    em.restore(saved);
    out += indent + "}\n";
    for (size_t d = rank + inner; d-- > rank;) {
      indent.resize(indent.size() - 2);
      out += indent + "}\n";
    }
  };
  ReductionRowHooks hooks;
  hooks.inner_loop = inner_loops;
  if (nest.serial) hooks.column_first = vars[rank - 1] + " == 0";
  emit_reduction_row(nest, em, hooks, row_indent, out);
  if (nest.serial) out += "      }\n";
  out += "    }\n  }\n";
}

// A scan nest: each work item is a line (a position of the loop vars but walk_dim), walked in order
// with its accumulators from 0.
void emit_scan_nest(const LoopNest& nest, int n, std::string& out) {
  const size_t rank = nest.extents.size(), along = static_cast<size_t>(nest.walk_dim);
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars;
  out += "  {\n";
  std::string lines = "1";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_i64 " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    if (d != along) lines += " * " + p + "s" + std::to_string(d);
    vars.push_back(p + "i" + std::to_string(d));
  }
  open_item_loop("lines", lines, "line", out);
  emit_walked_line(nest, vars, p + "s", "vf_i64", out);
  out += "    }\n  }\n";
}

void emit_nest(const LoopNest& nest, int n, NestKind kind, std::string& out) {
  if (kind == NestKind::Reduction) {
    emit_reduction_nest(nest, n, out);
    return;
  }
  if (nest.scan) {
    emit_scan_nest(nest, n, out);
    return;
  }
  const size_t rank = nest.extents.size();
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars;
  out += "  {\n";
  std::string numel = "1";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_i64 " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    numel += " * " + p + "s" + std::to_string(d);
    vars.push_back(p + "i" + std::to_string(d));
  }
  out += "    const vf_i64 numel = " + numel + ";\n";
  if (nest.scatter) {  // one work item, which walks every point in order
    out += "    const vf_i64 lo = 0, hi = begin <= base && base < end ? numel : 0;\n";
    out += "    base += 1;\n";
  } else {
    out += "    const vf_i64 lo = begin - base > 0 ? begin - base : 0;\n";
    out += "    const vf_i64 hi = end - base < numel ? end - base : numel;\n";
    out += "    base += numel;\n";
  }
  out += "    if (lo < hi) {\n";
  if (nest.flat) {
    out += "      for (vf_i64 flat = lo; flat < hi; ++flat) {\n";
    emit_nest_body(nest, vars, "vf_i64", "        ", out, "flat");
    out += "      }\n    }\n  }\n";
    return;
  }
  if (rank == 0) {
    emit_nest_body(nest, vars, "vf_i64", "      ", out);
    out += "    }\n  }\n";
    return;
  }
  const std::string last = std::to_string(rank - 1);
  out += "      vf_i64 rest = lo;\n";
  emit_position_unravel(vars, 0, rank, p + "s", "rest", "vf_i64 ", "      ", out);
  out += "      for (vf_i64 count = hi - lo; count > 0;) {\n";
  out += "        const vf_i64 row_end = " + p + "s" + last + " - " + vars[rank - 1] + " < count ? " + p + "s" +
         last + " : " + vars[rank - 1] + " + count;\n";
  out += "        count -= row_end - " + vars[rank - 1] + ";\n";
  out += "        for (; " + vars[rank - 1] + " < row_end; ++" + vars[rank - 1] + ") {\n";
  emit_nest_body(nest, vars, "vf_i64", "          ", out);
  out += "        }\n";
  out += "        " + vars[rank - 1] + " = 0;\n";
  for (size_t d = rank - 1; d-- > 0;) {
    out += "        if (++" + vars[d] + " < " + p + "s" + std::to_string(d) + ") continue;\n";
    out += "        " + vars[d] + " = 0;\n";
  }
  out += "      }\n    }\n  }\n";
}

}  // namespace

std::string emit_cpp(const KernelIR& ir, const KernelSchedule& schedule, const std::string& entry) {
  std::string out = "// Generated by viewfuse (CPU pointwise kernel).\n";
  out += kPreludeCpu;
  out += kPreludeCommon;
  emit_args_struct(schedule.abi, out);
  out += "extern \"C\" void " + entry + "(const void* args, vf_i64 begin, vf_i64 end) {\n";
  out += "  const VfArgs& a = *static_cast<const VfArgs*>(args);\n";
  out += "  vf_i64 base = 0;\n";
  for (size_t n = 0; n < ir.nests.size(); ++n) emit_nest(ir.nests[n], static_cast<int>(n), schedule.nests[n].kind, out);
  out += "  (void)a; (void)base;\n}\n";
  return out;
}

}  // namespace vf
