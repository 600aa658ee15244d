// The CUDA emitter: kernel IR to a CUDA C++ translation unit for NVRTC (no includes).
//
// Each loop nest covers its flattened points. In a flat nest (every buffer contiguous in the loop
// order) the point's position is the element index in every buffer, and aligned buffers move
// 16-byte packs. A nest whose stores are contiguous along the innermost dim moves packs along it
// (row-vector schedule). These vector passes take one span of packs per block with no loop (the
// launch gives each its block); a nest with loads contiguous along another dim is tiled through
// shared memory, a tile per pass of a loop over the grid (emit_cuda_tiled.cpp); otherwise, and
// for the elements a vector pass leaves, a grid-stride loop unravels the multi-index of each
// point with / and % in the index type (32-bit when the layout class allows it).
#include <algorithm>
#include <optional>

#include "codegen/emit_source.h"

namespace vf {
int vector_width(const LoopNest& nest, const std::vector<char>& vector_load) {
  int64_t widest = 1;
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (vector_load[id]) widest = std::max(widest, dtype_size(nest.values[id].dtype));
  for (const StoreStmt& s : nest.stores) widest = std::max(widest, dtype_size(s.dtype));
  return static_cast<int>(16 / widest);
}

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
const char kPreludeCommon[] =
#include "codegen/prelude_common.inc"
    ;

// Packs each thread keeps in flight per pass of the vector loops: U independent 16-byte loads per
// buffer before the first use. 2, and at most as many as keep the packs of all `vector_loads`
// within 48 registers (a RoPE reads eight packs a step). With a block per grain (plan_cuda_launch)
// the blocks keep enough in flight: on the H200, in blocks of 128 threads, one pack per thread
// made the merge-heads permute 10% slower and four made it 11% slower (measured while the packs
// still looped over the grid and loaded under `break`, before emit_pack_load_index).
int packs_in_flight(int vector_loads) {
  constexpr int kPacks = 2, kPackRegisters = 4, kLoadRegisters = 48;
  return std::clamp(kLoadRegisters / std::max(1, kPackRegisters * vector_loads), 1, kPacks);
}

int count(const std::vector<char>& flags) { return static_cast<int>(std::count(flags.begin(), flags.end(), 1)); }

// A vector schedule's shape: packs of v elements, u packs per thread per pass of the loop, and
// which loads move whole packs.
struct VectorPlan {
  int v = 1, u = 1;
  std::vector<char> loads;
};

// A flat nest: every load moves packs.
VectorPlan flat_vector_plan(const LoopNest& nest) {
  VectorPlan plan;
  plan.loads.assign(nest.values.size(), 0);
  for (size_t id = 0; id < nest.values.size(); ++id) plan.loads[id] = nest.values[id].op == ValueOp::Load;
  plan.v = vector_width(nest, plan.loads);
  plan.u = packs_in_flight(count(plan.loads));
  return plan;
}

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
// of the widest dtype) with single loads and stores, packs_in_flight packs in its one pass (all
// loads first); the remaining elements (and every element, when unaligned) take the scalar loop
// after.
void emit_vector_part(const LoopNest& nest, bool index32, std::string& out) {
  const VectorPlan plan = flat_vector_plan(nest);
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

// Whether a nest that is not flat can move packs along its innermost loop dim: every store's
// address is (something independent of the innermost var) + that var.
bool row_vector_ok(const LoopNest& nest, const std::vector<VarUse>& use) {
  if (nest.flat || nest.extents.empty() || nest.stores.empty()) return false;
  for (const StoreStmt& s : nest.stores)
    if (use[s.index] != VarUse::Unit) return false;
  return true;
}

// The loads of a row-vector nest that move whole packs of V: address (invariant + innermost var),
// and a guard, if any, with one answer per aligned group of V (a cat's source ranges that start
// at multiples of V: each pack comes from one source) or that only says whether the value is
// used (pred_in_bounds: the pack is read whole). Sets v to V.
std::vector<char> row_vector_loads(const LoopNest& nest, const std::vector<VarUse>& use,
                                   const std::vector<AbiField>& fields, int& v) {
  const int64_t last = static_cast<int64_t>(nest.extents.size()) - 1;
  std::vector<char> vec_load(nest.values.size(), 0);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    vec_load[id] = e.op == ValueOp::Load && use[e.index] == VarUse::Unit;
  }
  for (bool dropped = true; dropped;) {  // a guarded load dropped may widen V: check the others again
    dropped = false;
    v = vector_width(nest, vec_load);
    const std::vector<VarUse> group_use = group_var_uses(nest, last, v, fields);
    for (size_t id = 0; id < nest.values.size(); ++id) {
      const int pred = nest.values[id].pred;
      if (vec_load[id] && pred >= 0 && !nest.values[id].pred_in_bounds && group_use[pred] != VarUse::Invariant &&
          group_use[pred] != VarUse::Grouped) {
        vec_load[id] = 0;
        dropped = true;
      }
    }
  }
  return vec_load;
}

VectorPlan row_vector_plan(const LoopNest& nest, const std::vector<VarUse>& use, const std::vector<AbiField>& fields) {
  VectorPlan plan;
  plan.loads = row_vector_loads(nest, use, fields, plan.v);
  plan.u = packs_in_flight(count(plan.loads));
  return plan;
}

// The row-vector schedule's steps go in the row-major order of the loop dims, except along the
// row tile's dim: 2^kRowTileLog consecutive values of it (1 when its extent is not a multiple)
// vary right after the innermost dim, its high part keeping its place. The tile's dim is the one
// that moves a packed load to its next row in memory (ValueExpr::row_var), unless the stores'
// rows already follow it (rank - 2): the merge-heads permute [B, H, S, D] -> [B, S, H, D] then
// has a block read runs of 8 rows of D along S where it read one, and write runs of two rows.
// On the H200, in one process: the generated kernel in the plain order 131.74 us, a hand-written
// one in this order 131.42 (the same with runs of 4 or 16 rows), a 256 MiB copy 129.09; in the
// benchmark the producer went from 0.1-0.2 us behind torch.compile to a tie (-0.08 to +0.2 us).
constexpr int kRowTileLog = 3;

int row_tile_dim(const LoopNest& nest, const std::vector<char>& vec_load) {
  const int rows_dim = static_cast<int>(nest.extents.size()) - 2;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (vec_load[id] && e.unit_var == rows_dim + 1 && e.row_var >= 0 && e.row_var < rows_dim) return e.row_var;
  }
  return -1;
}

// The row-vector schedule: each step of a thread covers V consecutive points along the innermost
// dim (the extent a multiple of V), with the outer index math done once per step (divisions by
// multiply-high with 32-bit index math). The loads of row_vector_loads and every store move whole
// packs (a guarded load tests its guard once per pack); other loads read element by element.
// packs_in_flight steps in each thread's one pass, their loads issued before any use. The pass
// runs when every pack is aligned, tested once (multiple_at_steps); extents that are not a
// multiple of V and unaligned packs take the plain loop.
void emit_row_vector(const LoopNest& nest, const std::vector<VarUse>& use, KernelAbi& abi,
                     const std::vector<std::string>& sizes, const std::vector<std::string>& vars,
                     const std::string& pre, std::string& out) {
  const bool index32 = abi.index32;
  const size_t rank = nest.extents.size();
  const VectorPlan plan = row_vector_plan(nest, use, abi.fields);
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
  if (index32) {
    std::vector<std::pair<int, int64_t>> divisors;
    for (size_t d = 0; d < rank; ++d) divisors.emplace_back(nest.extents[d], d + 1 == rank ? v : 1);
    emit_dividers(abi, divisors, pre, "      ", out);
  }
  const int tile = row_tile_dim(nest, vec_load);
  if (tile >= 0) {
    out += "      const int " + pre + "rl = " + sizes[tile] + " % " + std::to_string(1 << kRowTileLog) + " == 0 ? " +
           std::to_string(kRowTileLog) + " : 0;\n";
    if (index32 && tile > 0) {
      const int k = abi_field(abi, AbiFieldKind::Divider, nest.extents[tile], 1 << kRowTileLog);
      out += "      const vf_divider " + pre + "dvt = " + pre + "rl ? vf_divider_of(" + field_name(k) + ") : " + pre + "dv" +
             std::to_string(tile) + ";\n";
    }
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

void emit_nest(const LoopNest& nest, int n, KernelAbi& abi, int tile, std::string& out) {
  if (tile > 0) {
    emit_tiled_nest(nest, n, transposed_dim(nest), tile, abi, out);
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
  if (nest.flat && !nest.stores.empty()) {
    emit_vector_part(nest, abi.index32, out);
  } else if (!nest.flat && rank > 0) {
    const std::vector<VarUse> use = var_uses(nest, static_cast<int64_t>(rank) - 1);
    if (row_vector_ok(nest, use)) emit_row_vector(nest, use, abi, sizes, vars, p, out);
  }
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

void emit_dividers(KernelAbi& abi, const std::vector<std::pair<int, int64_t>>& sizes, const std::string& pre,
                   const std::string& indent, std::string& out) {
  for (size_t d = 1; d < sizes.size(); ++d) {
    const int k = abi_field(abi, AbiFieldKind::Divider, sizes[d].first, static_cast<int32_t>(sizes[d].second));
    out += indent + "const vf_divider " + pre + "dv" + std::to_string(d) + " = vf_divider_of(" + field_name(k) + ");\n";
  }
}

std::string pack_type(DType dtype, int v) {
  return std::string("vf_pack<") + memory_type(dtype) + ", " + std::to_string(v) + ">";
}

std::string pack_at(DType dtype, int v, const std::string& ptr, const std::string& index, bool read) {
  const std::string c = read ? "const " : "";
  return "*(" + c + pack_type(dtype, v) + "*)((" + c + memory_type(dtype) + "*)" + ptr + " + " + index + ")";
}

bool calls_math_function(OpKind fn) {
  switch (fn) {
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Expm1: case OpKind::Log: case OpKind::Log1p:
    case OpKind::Log2: case OpKind::Log10: case OpKind::Sin: case OpKind::Cos: case OpKind::Tan:
    case OpKind::Tanh: case OpKind::Sinh: case OpKind::Cosh: case OpKind::Asin: case OpKind::Acos:
    case OpKind::Atan: case OpKind::Erf: case OpKind::Erfc: case OpKind::Erfinv: case OpKind::Pow:
    case OpKind::Fmod: case OpKind::Remainder: case OpKind::Atan2:
      return true;
    default:
      return false;
  }
}

// Threads resident per multiprocessor for a vector schedule: 1,536 when its packs in flight take at
// most 16 registers a thread (42 registers; 48 KB in flight per multiprocessor), else 1,024 (64
// registers: a RoPE's eight loads a step); as blocks of `block` threads.
int vector_blocks_per_sm(const VectorPlan& plan, int block) {
  constexpr int kPackRegisters = 4;
  return (count(plan.loads) * plan.u * kPackRegisters <= 16 ? 1536 : 1024) / block;
}

// Threads per block of a kernel whose nests are vector or plain loops: 128, so that a block moves
// 128 x U 16-byte packs of each tensor in its one pass (4 KB at U = 2). On the H200, against blocks
// of 256 (same threads resident, generated kernels, same run): the 1 GiB chain 97.5% -> 99.7% of
// the copy ceiling, RoPE 92.8% -> 97.3%, bias + gelu 89.6% -> 92.0%, the MLP gelu 96.5% -> 99.1%,
// the merge-heads consumer 94.9% -> 96.0%, the producer 95.8% -> 95.0%. One pack per thread was
// worse for all but the chain (the producer 83-86%). Both measured with the grid loop that
// emit_vector_pass replaced.
constexpr int kVectorBlock = 128;

// The launch shape of a kernel: threads per block, the blocks kept resident per multiprocessor and
// each nest's grain.
//
// Vector schedules keep 1,536 or 1,024 threads resident (vector_blocks_per_sm); tiled ones as many
// blocks of 256 as their shared memory allows, up to 4; a reduction nest as many as its registers
// per thread allow (AbiNest::registers). Kernels with only plain loops set none.
//
// Vector, tiled and reduction nests also get their grain, the points (rows) one block covers in
// one pass of its loop (V x U x threads, a tile, or a row per team): pack_launch gives them a
// block per grain, so that each block makes one pass and the hardware schedules the blocks (on
// the H200 a pass per block moves 5 to 8% more bytes per second than a grid of one wave whose
// blocks loop, and leaves no wave's tail of rows).
void plan_cuda_launch(KernelIR& ir) {
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (!ir.nests[n].is_reduction()) continue;
    AbiNest& abi = ir.abi.nests[n];  // 64K registers per multiprocessor; a row per team
    ir.abi.blocks_per_sm = std::max(1, 65536 / (ir.abi.block_size * abi.registers));
    abi.grain = std::max(1, ir.abi.block_size / std::max(1, abi.team));
    return;
  }
  const std::vector<int> sides = tile_sides(ir);
  std::vector<std::optional<VectorPlan>> plans(ir.nests.size());
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    const LoopNest& nest = ir.nests[n];
    const int64_t rank = static_cast<int64_t>(nest.extents.size());
    if (sides[n] > 0) continue;
    if (nest.flat && !nest.stores.empty()) {
      plans[n] = flat_vector_plan(nest);
    } else if (!nest.flat && rank > 0) {
      const std::vector<VarUse> use = var_uses(nest, rank - 1);
      if (row_vector_ok(nest, use)) plans[n] = row_vector_plan(nest, use, ir.abi.fields);
    }
  }
  const bool tiled = std::any_of(sides.begin(), sides.end(), [](int s) { return s > 0; });
  if (!tiled && std::any_of(plans.begin(), plans.end(), [](const auto& p) { return p.has_value(); }))
    ir.abi.block_size = kVectorBlock;
  int blocks = 0;
  auto take = [&](int b) { blocks = blocks == 0 ? b : std::min(blocks, b); };
  int64_t shared = 0;
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    AbiNest& abi = ir.abi.nests[n];
    if (sides[n] > 0) {
      shared += tiled_shared_bytes(ir.nests[n], sides[n]);
      abi.grain = int64_t{sides[n]} * sides[n];
    } else if (plans[n]) {
      abi.grain = int64_t{plans[n]->v} * plans[n]->u * ir.abi.block_size;
      take(vector_blocks_per_sm(*plans[n], ir.abi.block_size));
    }
  }
  // 228 KB of shared memory per multiprocessor on sm_90, 1 KB of it reserved per block.
  if (shared > 0) take(static_cast<int>(std::clamp<int64_t>(228 * 1024 / (shared + 1024), 1, 4)));
  ir.abi.blocks_per_sm = blocks;
}

std::string emit_cuda(KernelIR& ir, const std::string& entry) {
  // The body first: it adds the Divider fields its loops use; then the argument block.
  std::string body;
  const std::vector<int> sides = tile_sides(ir);
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (ir.nests[n].is_reduction())
      emit_cuda_reduction_nest(ir.nests[n], static_cast<int>(n), ir.abi, body);
    else
      emit_nest(ir.nests[n], static_cast<int>(n), ir.abi, sides[n], body);
  }
  finalize_abi(ir.abi, ir.abi.index32);
  std::string out = "// Generated by viewfuse (CUDA pointwise kernel).\n";
  out += kPreludeCuda;
  out += kPreludeCommon;
  out += ir.abi.index32 ? "typedef vf_i32 vf_index;\n" : "typedef vf_i64 vf_index;\n";
  emit_args_struct(ir.abi, out);
  const std::string min_blocks = ir.abi.blocks_per_sm > 0 ? ", " + std::to_string(ir.abi.blocks_per_sm) : "";
  out += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(ir.abi.block_size) + min_blocks + ") " + entry +
         "(const VfArgs a) {\n";
  out += body;
  out += "}\n";
  return out;
}

}  // namespace vf
