// The CUDA emitter of tiled nests (transposes: a load walks another dim than the output's innermost
// with unit stride, so its reads and the stores go through shared-memory tiles); schedule_cuda.cpp
// chooses the tiles.
#include <algorithm>
#include <optional>

#include "codegen/emit_source.h"

namespace vf {
namespace {

// A C condition for the packed variant, tested once per nest: the packed dims' extents are
// multiples of V, and every pack's address is aligned at every tile position (multiple_at_steps
// along p for the tiled loads, along the innermost dim for the others and the stores).
std::string packed_tile_condition(const LoopNest& nest, const TileSchedule& tile, const PackedTile& plan,
                                  const std::string& sp, const std::string& sl) {
  const int p = tile.dim;
  const int64_t last = static_cast<int64_t>(nest.extents.size()) - 1;
  const std::string V = std::to_string(plan.v);
  std::vector<std::string> memo_p(nest.indices.size()), memo_last(nest.indices.size());
  std::string c = "(" + sp + " % " + V + " == 0) & (" + sl + " % " + V + " == 0)";
  auto test = [&](DType dtype, int data, int index, bool along_p) {
    c += packs_aligned(nest, dtype, data, index, along_p ? p : last, plan.v, along_p ? memo_p : memo_last);
  };
  for (int id : tile.loads) test(nest.values[id].dtype, nest.values[id].param, nest.values[id].index, true);
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (plan.last[id]) test(nest.values[id].dtype, nest.values[id].param, nest.values[id].index, false);
  for (const StoreStmt& s : nest.stores) test(s.dtype, s.param, s.index, false);
  return c;
}

// One tile's phases in the packed variant, in the tile loop of emit_tiled_nest (vars[p] and
// vars[last] are set here, the other vars by the tile's unravelling): every load of the tile goes
// out before any is used (positions past the tensor's edge clamped to its last pack, never
// used); then the tiled packs go to shared memory, and after the barrier each thread computes
// its packs of the innermost dim lane by lane and stores them whole. Loads that are neither
// tiled nor packed read element by element in the lanes.
void emit_packed_tile(const LoopNest& nest, const TileSchedule& tile, const PackedTile& plan, const std::string& pre,
                      const std::vector<std::string>& vars, std::string& out) {
  const int p = tile.dim, t = tile.side;
  const size_t last = nest.extents.size() - 1;
  const std::string V = std::to_string(plan.v), R = std::to_string(plan.rows), J = std::to_string(t / plan.rows);
  const std::string sp = pre + "s" + std::to_string(p), sl = pre + "s" + std::to_string(last);
  const std::string col = pre + "tp + " + V + " * pc", row = pre + "tl + k";  // a tiled pack's p and innermost
  const std::vector<int>& tiled = tile.loads;
  auto pack_load = [&](int id, const std::string& into) {
    const ValueExpr& e = nest.values[id];
    out += "          " + into + " = " + pack_at(e.dtype, plan.v, field_name(e.param), index_ref(nest, e.index, vars), true) +
           ";\n";
  };
  auto pass = [&](const std::string& ip, const std::string& il) {
    out += "#pragma unroll\n      for (int r = 0; r < " + J + "; ++r) {\n";
    out += "        const int k = pr + r * " + R + ";\n";
    out += "        const vf_index " + vars[p] + " = " + ip + ", " + vars[last] + " = " + il + ";\n";
  };
  std::vector<int> roots, last_loads;
  for (int id : tiled) {
    out += "      " + pack_type(nest.values[id].dtype, plan.v) + " x" + std::to_string(id) + "[" + J + "];\n";
    roots.push_back(nest.values[id].index);
  }
  pass("min(" + col + ", " + sp + " - " + V + ")", "min(" + row + ", " + sl + " - 1)");
  out += "        {\n";
  emit_index_defs(nest, roots, vars, "vf_index", "          ", out);
  for (int id : tiled) pack_load(id, "x" + std::to_string(id) + "[r]");
  out += "        }\n      }\n";
  roots.clear();
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (plan.last[id]) {
      last_loads.push_back(static_cast<int>(id));
      roots.push_back(nest.values[id].index);
      out += "      " + pack_type(nest.values[id].dtype, plan.v) + " h" + std::to_string(id) + "[" + J + "];\n";
    }
  if (!last_loads.empty()) {
    pass("min(" + pre + "tp + k, " + sp + " - 1)", "min(" + pre + "tl + " + V + " * pc, " + sl + " - " + V + ")");
    out += "        {\n";
    emit_index_defs(nest, roots, vars, "vf_index", "          ", out);
    for (int id : last_loads) pack_load(id, "h" + std::to_string(id) + "[r]");
    out += "        }\n      }\n";
  }
  // The tiled packs into shared memory, transposed: a pack is inside the tensor or wholly past it.
  pass(col, row);
  out += "        if (" + vars[p] + " < " + sp + " && " + vars[last] + " < " + sl + ") {\n";
  out += "#pragma unroll\n          for (int lane = 0; lane < " + V + "; ++lane) {\n";
  for (int id : tiled)
    out += "            " + pre + "tile" + std::to_string(id) + "[" + V + " * pc + lane][k] = x" + std::to_string(id) +
           "[r].e[lane];\n";
  out += "          }\n        }\n      }\n";
  out += "      __syncthreads();\n";
  // The body, a pack of the innermost dim per row.
  std::unordered_map<int, std::string> from;
  std::vector<int> lane_roots;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load) continue;
    const std::string ids = std::to_string(id);
    if (std::find(tiled.begin(), tiled.end(), static_cast<int>(id)) != tiled.end()) {
      from[static_cast<int>(id)] = from_memory(e.dtype, pre + "tile" + ids + "[k][" + V + " * pc + lane]");
    } else if (plan.last[id]) {
      from[static_cast<int>(id)] = from_memory(e.dtype, "h" + ids + "[r].e[lane]");
    } else {
      lane_roots.push_back(e.index);
      from[static_cast<int>(id)] = load_expr(e.dtype, field_name(e.param), index_ref(nest, e.index, vars));
    }
  }
  pass(pre + "tp + k", pre + "tl + " + V + " * pc");
  out += "        if (" + vars[p] + " < " + sp + " && " + vars[last] + " < " + sl + ") {\n";
  std::vector<int> store_roots;
  for (size_t k = 0; k < nest.stores.size(); ++k) store_roots.push_back(nest.stores[k].index);
  emit_index_defs(nest, store_roots, vars, "vf_index", "          ", out);
  for (size_t k = 0; k < nest.stores.size(); ++k)
    out += "          const vf_index js" + std::to_string(k) + " = " + index_ref(nest, nest.stores[k].index, vars) + ";\n" +
           "          " + pack_type(nest.stores[k].dtype, plan.v) + " s" + std::to_string(k) + ";\n";
  out += "#pragma unroll\n          for (int lane = 0; lane < " + V + "; ++lane) {\n";
  out += "            const vf_index " + vars[last] + " = " + pre + "tl + " + V + " * pc + lane;\n";
  emit_index_defs(nest, lane_roots, vars, "vf_index", "            ", out);
  out += "            {\n";
  LoopNest as_flat = nest;  // emit_nest_body's pack-lane mode; every load is overridden
  as_flat.flat = true;
  emit_nest_body(as_flat, vars, "vf_index", "              ", out, kVectorLane, &from);
  out += "            }\n          }\n";
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    const StoreStmt& s = nest.stores[k];
    const std::string ks = std::to_string(k);
    out += "          " + pack_at(s.dtype, plan.v, field_name(s.param), "js" + ks, false) + " = s" + ks + ";\n";
  }
  out += "        }\n      }\n      __syncthreads();\n";
}

}  // namespace

// A tiled schedule for a transpose-like nest: each block takes T x T tiles of (dim p, innermost
// dim) for fixed other dims (T from the schedule: schedule_cuda.cpp tile_sides). The loads that walk dim p with unit stride are
// first read into shared memory with threads along p (coalesced, T / (threads / T) loads per
// thread in flight), then the body runs with threads along the innermost dim (coalesced stores),
// reading those loads from the tile and its other loads from registers filled before the barrier;
// in 16-byte packs when the run allows (emit_packed_tile), else element by element. With 32-bit
// index math, the tile number is unravelled by multiply-high division.
void emit_tiled_nest(const LoopNest& nest, int n, const NestSchedule& schedule, const KernelAbi& abi, std::string& out) {
  const TileSchedule& tile = schedule.tile;
  const int p = tile.dim, t = tile.side;
  const bool index32 = abi.index32;
  const size_t rank = nest.extents.size();
  const std::string pre = "n" + std::to_string(n) + "_";
  auto size = [&](size_t d) { return pre + "s" + std::to_string(d); };
  const std::vector<int>& tiled = tile.loads;
  const std::string T = std::to_string(t);
  std::vector<std::string> vars;
  out += "  {\n";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_index " + size(d) + " = " + field_name(nest.extents[d]) + ";\n";
    vars.push_back(pre + "i" + std::to_string(d));
  }
  const std::string sp = size(p), sl = size(rank - 1);
  // Tile coordinates, innermost first: the tile along the last dim, along p, then the other dims.
  std::vector<std::string> tsizes, tvars;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (static_cast<int>(d) != p) {
      tsizes.push_back(size(d));
      tvars.push_back(vars[d]);
    }
  tsizes.push_back(pre + "tiles_p");
  tvars.push_back(pre + "tp");
  tsizes.push_back(pre + "tiles_l");
  tvars.push_back(pre + "tl");
  out += "    const vf_index " + pre + "tiles_p = (" + sp + " + " + T + " - 1) / " + T + ", " + pre + "tiles_l = (" + sl +
         " + " + T + " - 1) / " + T + ";\n";
  std::string tiles = "(vf_i64)" + pre + "tiles_p * " + pre + "tiles_l";
  for (size_t d = 0; d + 1 < rank; ++d)
    if (static_cast<int>(d) != p) tiles += " * " + size(d);
  out += "    const vf_i64 tiles = " + tiles + ";\n";
  if (index32) emit_dividers(schedule.dividers, pre, "    ", out);
  std::unordered_map<int, std::string> from_tile;
  for (int id : tiled) {
    const ValueExpr& e = nest.values[id];
    const std::string name = pre + "tile" + std::to_string(id);
    out += "    __shared__ " + std::string(memory_type(e.dtype)) + " " + name + "[" + T + "][" + T + " + 1];\n";
    from_tile[id] = from_memory(e.dtype, name + "[k][tx]");
  }
  // The launch's block has abi.block_size threads (pack_launch), so each phase's trip count is known.
  out += "    const int tx = threadIdx.x % " + T + ", ty = threadIdx.x / " + T + ";\n";
  const std::string rows = std::to_string(tile.rows);
  const std::string R = std::to_string(tile.per_thread);
  // The other unguarded loads are read into registers before the barrier.
  std::vector<int> hoisted, hoisted_roots;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load || e.pred >= 0 || from_tile.count(static_cast<int>(id))) continue;
    hoisted.push_back(static_cast<int>(id));
    hoisted_roots.push_back(e.index);
  }
  // Staged: all of a tile's loads go out before any is used (the tiled ones into registers, then
  // into shared memory after the other loads are issued), branch-free, positions past the edge
  // reading the last element instead (never used); otherwise each tiled load is written to shared
  // memory as it arrives.
  const bool staged = tile.staged;
  // Tiles move 16-byte packs when the schedule has the packed variant and the run's layouts align
  // them (tested once); otherwise each thread moves single elements.
  const std::optional<PackedTile>& packed = tile.packed;
  if (packed) {
    out += "    const bool " + pre + "packed = " + packed_tile_condition(nest, tile, *packed, sp, sl) + ";\n";
    out += "    const int pc = threadIdx.x % " + std::to_string(t / packed->v) + ", pr = threadIdx.x / " +
           std::to_string(t / packed->v) + ";\n";
  }
  out += "    for (vf_i64 t = blockIdx.x; t < tiles; t += gridDim.x) {\n";
  for (const std::string& v : tvars) out += "      vf_index " + v + ";\n";
  emit_unravel("(vf_index)t", tsizes, tvars, "", index32, pre, "      ", out);
  out += "      " + pre + "tp *= " + T + ";\n      " + pre + "tl *= " + T + ";\n";
  if (packed) {
    std::string body;
    emit_packed_tile(nest, tile, *packed, pre, vars, body);
    out += "      if (" + pre + "packed) {\n";
    for (size_t at = 0; at < body.size();) {  // indented one level more, but the pragmas
      const size_t end = body.find('\n', at) + 1;
      out += (body[at] == '#' ? "" : "  ") + body.substr(at, end - at);
      at = end;
    }
    out += "        continue;\n      }\n";
  }
  // Phase 1: threads along p read the tiled loads; phase 2 (below): threads along the innermost dim
  // compute and store, reading the other unguarded loads of their rows from registers.
  // Opens a loop over a thread's r-th position of the tile: threads along p with `along_p`, along
  // the innermost dim otherwise; guarded, or clamped into the tensor (`clamp`).
  auto position_loop = [&](bool along_p, bool clamp) {
    out += "#pragma unroll\n";
    out += "      for (int r = 0; r < " + R + "; ++r) {\n";
    out += "        const int k = ty + r * " + rows + ";\n";
    const std::string ip = pre + "tp + " + (along_p ? "tx" : "k"), il = pre + "tl + " + (along_p ? "k" : "tx");
    if (clamp) {
      out += "        const vf_index " + vars[p] + " = min(" + ip + ", " + sp + " - 1), " + vars[rank - 1] + " = min(" + il +
             ", " + sl + " - 1);\n";
      out += "        {\n";
    } else {
      out += "        const vf_index " + vars[p] + " = " + ip + ", " + vars[rank - 1] + " = " + il + ";\n";
      out += "        if (k < " + T + " && " + vars[p] + " < " + sp + " && " + vars[rank - 1] + " < " + sl + ") {\n";
    }
  };
  std::vector<int> roots;
  for (int id : tiled) roots.push_back(nest.values[id].index);
  auto tiled_load = [&](int id) {
    const ValueExpr& e = nest.values[id];
    return "((const " + std::string(memory_type(e.dtype)) + "*)" + field_name(e.param) + ")[" +
           index_ref(nest, e.index, vars) + "]";
  };
  for (int id : tiled)
    if (staged) out += "      " + std::string(memory_type(nest.values[id].dtype)) + " x" + std::to_string(id) + "[" + R + "];\n";
  position_loop(true, staged);
  emit_index_defs(nest, roots, vars, "vf_index", "          ", out);
  for (int id : tiled)
    out += "          " + (staged ? "x" + std::to_string(id) + "[r]" : pre + "tile" + std::to_string(id) + "[tx][k]") +
           " = " + tiled_load(id) + ";\n";
  out += "        }\n      }\n";
  for (int id : hoisted) {
    const ValueExpr& e = nest.values[id];
    out += "      " + std::string(memory_type(e.dtype)) + " h" + std::to_string(id) + "[" + R + "];\n";
    from_tile[id] = from_memory(e.dtype, "h" + std::to_string(id) + "[r]");
  }
  if (!hoisted.empty()) {
    position_loop(false, staged);
    emit_index_defs(nest, hoisted_roots, vars, "vf_index", "          ", out);
    for (int id : hoisted) {
      const ValueExpr& e = nest.values[id];
      out += "          h" + std::to_string(id) + "[r] = ((const " + memory_type(e.dtype) + "*)" + field_name(e.param) + ")[" +
             index_ref(nest, e.index, vars) + "];\n";
    }
    out += "        }\n      }\n";
  }
  if (staged) {
    position_loop(true, false);
    for (int id : tiled) out += "          " + pre + "tile" + std::to_string(id) + "[tx][k] = x" + std::to_string(id) + "[r];\n";
    out += "        }\n      }\n";
  }
  out += "      __syncthreads();\n";
  position_loop(false, false);
  emit_nest_body(nest, vars, "vf_index", "          ", out, "", &from_tile);
  out += "        }\n      }\n      __syncthreads();\n";
  out += "    }\n  }\n";
}


}  // namespace vf
