// The CUDA emitter: kernel IR and its schedule (schedule_cuda.h) to a CUDA C++ translation unit for
// NVRTC (no includes). It prints what the schedule chose, nest by nest:
//
// - a flat-vector nest (every buffer contiguous in the loop order) moves 16-byte packs at the
//   point's position in every buffer, when the buffers are aligned;
// - a row-vector nest moves packs along the innermost dim, the outer index unravelled once a step;
// - a tiled nest goes through shared memory (emit_cuda_tiled.cpp), a reduction nest a team per
//   row (emit_cuda_reduction.cpp).
//
// The vector passes take one span of packs per block with no loop (the launch gives each its
// block); for the points they leave, and for a plain nest, a grid-stride loop unravels each
// point's multi-index with / and % in the index type (32-bit when the layout class allows it).
#include <algorithm>
#include <optional>

#include "codegen/emit_source.h"

namespace vf {

// The tests are joined by the bitwise & and |, which have no side effects to order: nvcc then loads
// every parameter at once and branches once, where && made a branch per test, each waiting for
// its constant load.
std::string multiple_at_steps(const LoopNest& nest, int id, int64_t last, int64_t m, std::vector<std::string>& memo) {
  if (!memo[id].empty()) return memo[id];
  const IndexExpr& e = nest.indices[id];
  auto f = [&](int k) { return multiple_at_steps(nest, k, last, m, memo); };
  std::string c = "false";
  switch (e.op) {
    case IndexOp::Const: c = e.value % m == 0 ? "true" : "false"; break;
    case IndexOp::Param: c = "(" + field_name(static_cast<int>(e.value)) + " % " + std::to_string(m) + " == 0)"; break;
    case IndexOp::Var: c = e.value == last ? "true" : "false"; break;
    case IndexOp::Add: case IndexOp::Sub: case IndexOp::Min: c = "(" + f(e.a) + " & " + f(e.b) + ")"; break;
    case IndexOp::Mul: c = "(" + f(e.a) + " | " + f(e.b) + ")"; break;
    case IndexOp::Select: c = "(" + f(e.b) + " & " + f(e.c) + ")"; break;
    default: break;
  }
  return memo[id] = c;
}

std::string packs_aligned(const LoopNest& nest, DType dtype, int data, int index, int64_t var, int v,
                          std::vector<std::string>& memo) {
  return " & vf_aligned(" + field_name(data) + ", " + std::to_string(v * dtype_size(dtype)) + ") & " +
         multiple_at_steps(nest, index, var, v, memo);
}

namespace {

const char kPreludeCuda[] =
#include "codegen/prelude_cuda.inc"
    ;

// The type of the vector loops' pack counters: 32-bit when the kernel's index math is (every
// output has fewer than 2^31 elements, and a thread's packs stay below a nest's packs plus a span),
// else 64-bit.
std::string pack_counter_type(bool index32) { return index32 ? "vf_index" : "vf_i64"; }

// The head of a vector nest's one pass: the launch gives the nest a block per grain (span packs
// or steps, pack_launch), so each thread takes packs q0, q0 + stride, ... of its block's span
// once, with no loop. A loop over the grid kept its counters live across the loads: the
// merge-heads producer took 39 registers with it and 32 without (2,048 threads resident instead
// of 1,536; 30 with the branch-free alignment tests).
void emit_vector_pass(const std::string& Q, const std::string& count, std::string& out) {
  out += "      const " + Q + " q0 = (" + Q + ")blockIdx.x * span + threadIdx.x;\n";
  out += "      if (VF_COVERS_EXACTLY(" + count + ", span) || q0 < " + count + ") {\n";
}

// The pack index q of step u in the loop that loads: past the end it is the last pack, read again
// and not stored, so that every load is unconditional and the compiler issues all of them before
// the first use. With `if (q >= count) break;` instead, nvcc computed and stored the first pack
// before loading the second (the merge-heads consumer: 132 -> 142 us on the H200).
void emit_pack_load_index(const std::string& Q, const std::string& count, std::string& out) {
  out += "          const " + Q + " q = VF_COVERS_EXACTLY(" + count + ", span) || q0 + u * stride < " + count +
         " ? q0 + u * stride : " + count + " - 1;\n";
}

// The vector part of a flat nest: when every buffer's first element is aligned to its pack size
// (tested branch-free, as in multiple_at_steps), each thread moves packs of V elements (16 bytes
// of the widest dtype) with single loads and stores, the schedule's u packs in its one pass (all
// loads first); the remaining elements (and every element, when unaligned) take the scalar loop
// after.
void emit_vector_part(const LoopNest& nest, const VectorSchedule& plan, bool index32, std::string& out) {
  const std::string Q = pack_counter_type(index32);
  const int v = plan.v;
  const std::string V = std::to_string(v), U = std::to_string(plan.u);
  auto base = [&](DType dtype, int data, int offset) {
    return std::string("((") + memory_type(dtype) + "*)" + field_name(data) + " + " + field_name(offset) + ")";
  };
  std::string aligned = "true";
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load)
      aligned += " & vf_aligned(" + base(e.dtype, e.param, e.flat_offset) + ", sizeof(" + pack_type(e.dtype, v) + "))";
  for (const StoreStmt& s : nest.stores)
    aligned += " & vf_aligned(" + base(s.dtype, s.param, s.flat_offset) + ", sizeof(" + pack_type(s.dtype, v) + "))";
  std::unordered_map<int, std::string> from_pack;
  out += "    if (" + aligned + ") {\n";
  out += "      const " + Q + " packs = numel / " + V + ", stride = VF_BLOCK_DIM, span = " + U + " * stride;\n";
  emit_vector_pass(Q, "packs", out);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load) continue;
    const std::string p = "p" + std::to_string(id);
    out += "        " + pack_type(e.dtype, v) + " " + p + "[" + U + "];\n";
    from_pack[static_cast<int>(id)] = from_memory(e.dtype, p + "[u].e[lane]");
  }
  out += "#pragma unroll\n";
  out += "        for (int u = 0; u < " + U + "; ++u) {\n";
  emit_pack_load_index(Q, "packs", out);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load) continue;
    out += "          p" + std::to_string(id) + "[u] = ((const " + pack_type(e.dtype, v) + "*)" +
           base(e.dtype, e.param, e.flat_offset) + ")[q];\n";
  }
  out += "        }\n";
  out += "#pragma unroll\n";
  out += "        for (int u = 0; u < " + U + "; ++u) {\n";
  out += "          const " + Q + " q = q0 + u * stride;\n";
  out += "          if (!VF_COVERS_EXACTLY(packs, span) && q >= packs) break;\n";
  for (size_t k = 0; k < nest.stores.size(); ++k)
    out += "          " + pack_type(nest.stores[k].dtype, v) + " s" + std::to_string(k) + ";\n";
  out += "#pragma unroll\n";
  out += "          for (int lane = 0; lane < " + V + "; ++lane) {\n";
  emit_nest_body(nest, {}, "vf_index", "            ", out, kVectorLane, &from_pack);
  out += "          }\n";
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    const StoreStmt& s = nest.stores[k];
    out += "          ((" + pack_type(s.dtype, v) + "*)" + base(s.dtype, s.param, s.flat_offset) + ")[q] = s" +
           std::to_string(k) + ";\n";
  }
  out += "        }\n";
  out += "      }\n";
  out += "      start = packs * " + V + ";\n";
  out += "    }\n";
}

// The row-vector schedule: each step of a thread covers V consecutive points along the innermost
// dim (the extent a multiple of V), with the outer index math done once per step (divisions by
// multiply-high with 32-bit index math). The schedule's packed loads and every store move whole
// packs (a guarded load tests its guard once per pack); other loads read element by element.
// A thread makes the schedule's u steps in its one pass, their loads issued before any use. The pass
// runs when every pack is aligned, tested once (multiple_at_steps); extents that are not a
// multiple of V and unaligned packs take the plain loop.
void emit_row_vector(const LoopNest& nest, const NestSchedule& schedule, bool index32,
                     const std::vector<std::string>& sizes, const std::vector<std::string>& vars,
                     const std::string& pre, std::string& out) {
  const size_t rank = nest.extents.size();
  const VectorSchedule& plan = schedule.vector;
  const int v = plan.v;
  const std::vector<char>& vec_load = plan.loads;
  const std::string V = std::to_string(v), U = std::to_string(plan.u);
  std::vector<std::string> vsizes = sizes;
  vsizes[rank - 1] = pre + "sv";
  // Every pack address aligned at every step, tested once: the base pointers and the index
  // expressions' parameters. Otherwise the nest takes the plain loop.
  std::vector<std::string> memo(nest.indices.size());
  std::string aligned;
  auto test = [&](DType dtype, int data, int index) {
    aligned += packs_aligned(nest, dtype, data, index, static_cast<int64_t>(rank) - 1, v, memo);
  };
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (vec_load[id]) test(nest.values[id].dtype, nest.values[id].param, nest.values[id].index);
  for (const StoreStmt& st : nest.stores) test(st.dtype, st.param, st.index);
  out += "    if (" + sizes[rank - 1] + " % " + V + " == 0" + aligned + ") {\n";
  out += "      const vf_index " + pre + "sv = " + sizes[rank - 1] + " / " + V + ";\n";
  if (index32) emit_dividers(schedule.dividers, pre, "      ", out);
  const int tile = plan.row_tile;
  if (tile >= 0) {
    out += "      const int " + pre + "rl = " + sizes[tile] + " % " + std::to_string(1 << plan.row_tile_log) + " == 0 ? " +
           std::to_string(plan.row_tile_log) + " : 0;\n";
    if (index32 && tile > 0)
      out += "      const vf_divider " + pre + "dvt = " + pre + "rl ? vf_divider_of(" + field_name(schedule.row_tile_divider) +
             ") : " + pre + "dv" + std::to_string(tile) + ";\n";
  }
  const std::string Q = pack_counter_type(index32);
  out += "      const " + Q + " steps = numel / " + V + ", stride = VF_BLOCK_DIM, span = " + U + " * stride;\n";
  emit_vector_pass(Q, "steps", out);
  // Per step u: its loop vars, the store addresses and the loaded packs.
  std::string decl;
  for (size_t d = 0; d < rank; ++d) decl += "        vf_index iv" + std::to_string(d) + "[" + U + "];\n";
  std::vector<int> roots;
  std::unordered_map<int, std::string> override;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load) continue;
    const std::string p = "p" + std::to_string(id);
    if (vec_load[id]) {
      decl += "        " + pack_type(e.dtype, v) + " " + p + "[" + U + "];\n";
      override[static_cast<int>(id)] = from_memory(e.dtype, p + "[u].e[lane]");
      roots.push_back(e.index);
      if (e.pred >= 0) roots.push_back(e.pred);
    }
  }
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    decl += "        vf_index js" + std::to_string(k) + "[" + U + "];\n";
    roots.push_back(nest.stores[k].index);
  }
  // The guards of packed loads (a cat's source ranges) have one answer per pack: each step keeps
  // it in jg<index>[u], which the lanes read instead of testing their own positions.
  std::unordered_map<int, std::string> pack_guard;
  std::vector<int> pack_guards;  // their index ids, in value order
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (!vec_load[id] || e.pred < 0 || e.pred_in_bounds || pack_guard.count(e.pred)) continue;
    pack_guard[e.pred] = "jg" + std::to_string(e.pred) + "[u]";
    pack_guards.push_back(e.pred);
    decl += "        vf_index jg" + std::to_string(e.pred) + "[" + U + "];\n";
  }
  out += decl;
  out += "#pragma unroll\n";
  out += "        for (int u = 0; u < " + U + "; ++u) {\n";
  emit_pack_load_index(Q, "steps", out);
  {
    std::vector<std::string> iv;
    for (size_t d = 0; d < rank; ++d) iv.push_back("iv" + std::to_string(d) + "[u]");
    emit_unravel("(vf_index)q", vsizes, iv, V, index32, pre, "          ", out, tile);
  }
  out += "          {\n";
  for (size_t d = 0; d < rank; ++d) out += "            const vf_index " + vars[d] + " = iv" + std::to_string(d) + "[u];\n";
  emit_index_defs(nest, roots, vars, "vf_index", "            ", out);
  for (size_t k = 0; k < nest.stores.size(); ++k)
    out += "            js" + std::to_string(k) + "[u] = " + index_ref(nest, nest.stores[k].index, vars) + ";\n";
  for (int index : pack_guards) out += "            " + pack_guard[index] + " = " + index_ref(nest, index, vars) + ";\n";
  for (size_t id = 0; id < nest.values.size(); ++id) {
    if (!vec_load[id]) continue;
    const ValueExpr& e = nest.values[id];
    const std::string p = "p" + std::to_string(id) + "[u]";
    // A guard that only says whether the value is used (pred_in_bounds) is not tested: the pack is read.
    if (e.pred >= 0 && !e.pred_in_bounds)
      out += "            if (!(" + index_ref(nest, e.pred, vars) + ")) " + p + " = {};\n            else\n";
    out += "            " + p + " = " + pack_at(e.dtype, v, field_name(e.param), index_ref(nest, e.index, vars), true) + ";\n";
  }
  out += "          }\n";
  out += "        }\n";
  // Compute and store each step.
  out += "#pragma unroll\n";
  out += "        for (int u = 0; u < " + U + "; ++u) {\n";
  out += "          if (!VF_COVERS_EXACTLY(steps, span) && q0 + u * stride >= steps) break;\n";
  for (size_t k = 0; k < nest.stores.size(); ++k)
    out += "          " + pack_type(nest.stores[k].dtype, v) + " s" + std::to_string(k) + ";\n";
  out += "#pragma unroll\n";
  out += "          for (int lane = 0; lane < " + V + "; ++lane) {\n";
  for (size_t d = 0; d < rank; ++d)
    out += "            const vf_index " + vars[d] + " = iv" + std::to_string(d) + "[u]" +
           (d + 1 == rank ? " + lane" : "") + ";\n";
  std::vector<int> lane_roots;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load || vec_load[id]) continue;
    lane_roots.push_back(e.index);
    override[static_cast<int>(id)] = load_expr(e.dtype, field_name(e.param), index_ref(nest, e.index, vars));
  }
  emit_index_defs(nest, lane_roots, vars, "vf_index", "            ", out);
  out += "            {\n";
  LoopNest as_flat = nest;  // emit_nest_body's pack-lane mode; every load is overridden
  as_flat.flat = true;
  emit_nest_body(as_flat, vars, "vf_index", "              ", out, kVectorLane, &override, &pack_guard);
  out += "            }\n";
  out += "          }\n";
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    const StoreStmt& st = nest.stores[k];
    const std::string ks = std::to_string(k);
    out += "          " + pack_at(st.dtype, v, field_name(st.param), "js" + ks + "[u]", false) + " = s" + ks + ";\n";
  }
  out += "        }\n";
  out += "      }\n";
  out += "      start = numel;\n";
  out += "    }\n";
}

// NestKind::Walk: a thread per line (a position of the loop vars but walk_dim), which walks
// walk_dim in order: an in-order scatter's adds, a scan's running sums (its accumulators start at 0
// per line).
void emit_walk_nest(const LoopNest& nest, int n, std::string& out) {
  const size_t rank = nest.extents.size(), along = static_cast<size_t>(nest.walk_dim);
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars;
  std::string numel = "(vf_i64)1";
  out += "  {\n";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_index " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    vars.push_back(p + "i" + std::to_string(d));
    if (d != along) numel += " * (vf_i64)" + p + "s" + std::to_string(d);
  }
  out += "    const vf_i64 numel = " + numel + ";\n";
  out += "    for (vf_i64 flat = (vf_i64)blockIdx.x * blockDim.x + threadIdx.x; flat < numel;\n";
  out += "         flat += (vf_i64)gridDim.x * blockDim.x) {\n";
  out += "      vf_i64 rest = flat;\n";
  emit_walked_line(nest, vars, p + "s", "vf_index", out);
  out += "    }\n  }\n";
}

void emit_nest(const LoopNest& nest, int n, const NestSchedule& schedule, const KernelAbi& abi, std::string& out) {
  if (schedule.kind == NestKind::Walk) {
    emit_walk_nest(nest, n, out);
    return;
  }
  if (schedule.kind == NestKind::Tiled) {
    emit_tiled_nest(nest, n, schedule, abi, out);
    return;
  }
  const size_t rank = nest.extents.size();
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars, sizes;
  out += "  {\n";
  // The points: with 32-bit index math fewer than 2^31, multiplied in unsigned 32-bit (a partial
  // product may wrap when a later extent is 0; the full product is exact), else in 64-bit.
  const std::string factor = abi.index32 ? "(vf_u32)" : "(vf_i64)";
  std::string numel = factor + "1";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_index " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    numel = (d == 0 ? "" : numel + " * ") + factor + p + "s" + std::to_string(d);
    vars.push_back(p + "i" + std::to_string(d));
    sizes.push_back(p + "s" + std::to_string(d));
  }
  out += abi.index32 ? "    const vf_index numel = (vf_index)(" + numel + ");\n" : "    const vf_i64 numel = " + numel + ";\n";
  out += "    vf_i64 start = 0;\n";
  if (schedule.kind == NestKind::FlatVector) emit_vector_part(nest, schedule.vector, abi.index32, out);
  if (schedule.kind == NestKind::RowVector) emit_row_vector(nest, schedule, abi.index32, sizes, vars, p, out);
  out += "    for (vf_i64 flat = start + (vf_i64)blockIdx.x * blockDim.x + threadIdx.x; flat < numel;\n";
  out += "         flat += (vf_i64)gridDim.x * blockDim.x) {\n";
  if (nest.flat) {
    out += "      const vf_index flat_i = (vf_index)flat;\n";
    emit_nest_body(nest, vars, "vf_index", "      ", out, "flat_i");
    out += "    }\n  }\n";
    return;
  }
  out += "      vf_index rest = (vf_index)flat;\n";
  emit_position_unravel(vars, 0, rank, p + "s", "rest", "const vf_index ", "      ", out);
  out += "      (void)rest;\n";
  emit_nest_body(nest, vars, "vf_index", "      ", out);
  out += "    }\n  }\n";
}

}  // namespace

void emit_unravel(const std::string& flat, const std::vector<std::string>& sizes, const std::vector<std::string>& vars,
                  const std::string& inner_scale, bool dividers, const std::string& pre, const std::string& indent,
                  std::string& out, int row_tile) {
  const size_t rank = sizes.size();
  out += indent + "vf_index " + pre + "rest = " + flat + ";\n";
  for (size_t d = rank; d-- > 0;) {
    const std::string scale = d + 1 == rank && !inner_scale.empty() ? " * " + inner_scale : "";
    // The row tile's dim takes its high part here and its low bits from <pre>lo.
    const bool tiled = static_cast<int>(d) == row_tile;
    const std::string size = tiled ? "(" + sizes[d] + " >> " + pre + "rl)" : sizes[d];
    auto index = [&](const std::string& x) { return tiled ? "((" + x + ") << " + pre + "rl) + " + pre + "lo" : "(" + x + ")"; };
    if (d == 0) {
      out += indent + vars[d] + " = " + index(pre + "rest") + scale + ";\n";
    } else if (dividers) {
      const std::string divider = tiled ? pre + "dvt" : pre + "dv" + std::to_string(d);
      out += indent + "{\n" + indent + "  const vf_index quot = (vf_index)vf_div((vf_u32)" + pre + "rest, " + divider + ");\n";
      out += indent + "  " + vars[d] + " = " + index(pre + "rest - quot * " + size) + scale + ";\n";
      out += indent + "  " + pre + "rest = quot;\n" + indent + "}\n";
    } else {
      out += indent + vars[d] + " = " + index(pre + "rest % " + size) + scale + ";\n";
      out += indent + pre + "rest /= " + size + ";\n";
    }
    if (d + 1 == rank && row_tile >= 0) {
      out += indent + "const vf_index " + pre + "lo = " + pre + "rest & ((1 << " + pre + "rl) - 1);\n";
      out += indent + pre + "rest >>= " + pre + "rl;\n";
    }
  }
}

void emit_dividers(const std::vector<int>& fields, const std::string& pre, const std::string& indent, std::string& out) {
  for (size_t d = 1; d < fields.size(); ++d)
    out += indent + "const vf_divider " + pre + "dv" + std::to_string(d) + " = vf_divider_of(" + field_name(fields[d]) + ");\n";
}

std::string pack_type(DType dtype, int v) {
  return std::string("vf_pack<") + memory_type(dtype) + ", " + std::to_string(v) + ">";
}

std::string pack_at(DType dtype, int v, const std::string& ptr, const std::string& index, bool read) {
  const std::string c = read ? "const " : "";
  return "*(" + c + pack_type(dtype, v) + "*)((" + c + memory_type(dtype) + "*)" + ptr + " + " + index + ")";
}

std::string emit_cuda(const KernelIR& ir, const KernelSchedule& schedule, const std::string& entry) {
  const KernelAbi& abi = schedule.abi;
  std::string out = "// Generated by viewfuse (CUDA pointwise kernel).\n";
  out += kPreludeCuda;
  out += kPreludeCommon;
  out += abi.index32 ? "typedef vf_i32 vf_index;\n" : "typedef vf_i64 vf_index;\n";
  emit_args_struct(abi, out);
  const std::string min_blocks = abi.blocks_per_sm > 0 ? ", " + std::to_string(abi.blocks_per_sm) : "";
  out += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(abi.block_size) + min_blocks + ") " + entry +
         "(const VfArgs a) {\n";
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (schedule.nests[n].kind == NestKind::Reduction)
      emit_cuda_reduction_nest(ir.nests[n], static_cast<int>(n), schedule.nests[n], abi, out);
    else
      emit_nest(ir.nests[n], static_cast<int>(n), schedule.nests[n], abi, out);
  }
  out += "}\n";
  return out;
}

}  // namespace vf
