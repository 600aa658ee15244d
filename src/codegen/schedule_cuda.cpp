// schedule_cuda: the choices of the CUDA schedules (emit_cuda*.cpp print them), with the
// measurements behind the constants.
#include "codegen/schedule_cuda.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>

#include "base/error.h"

namespace vf {
namespace {

// ---- The index width ----

bool fits32(const Layout& l) {
  if (l.storage_extent() >= kIndex32Limit || l.numel() >= kIndex32Limit) return false;
  for (int64_t s : l.strides)
    if (s < 0 || s >= kIndex32Limit) return false;
  return l.offset >= 0 && l.offset < kIndex32Limit;
}

// Whether 32-bit index math is enough for every buffer, view and index constant of the spec.
bool index32_ok(const KernelSpec& spec, const KernelAbi& abi) {
  for (size_t i = 0; i < spec.input_layouts.size(); ++i)
    if (spec.fusion->inputs()[i]->is_tensor && !fits32(spec.input_layouts[i])) return false;
  for (const Layout& l : spec.output_layouts)
    if (!fits32(l)) return false;
  for (const AbiView& v : abi.views)
    if (!fits32(v.spec_view_layout)) return false;
  for (const AbiField& f : abi.fields)
    if (f.kind == AbiFieldKind::Constant && f.b < 1000 && (f.value >= kIndex32Limit || f.value <= -kIndex32Limit))
      return false;
  return true;
}

// 16 bytes over the widest element that the loads flagged in `vector_load` and the stores move.
int vector_width(const LoopNest& nest, const std::vector<char>& vector_load) {
  int64_t widest = 1;
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (vector_load[id]) widest = std::max(widest, dtype_size(nest.values[id].dtype));
  for (const StoreStmt& s : nest.stores) widest = std::max(widest, dtype_size(s.dtype));
  return static_cast<int>(16 / widest);
}

int count(const std::vector<char>& flags) { return static_cast<int>(std::count(flags.begin(), flags.end(), 1)); }

// Whether the elementwise op `fn` is a call into the math library (tens of instructions), not
// arithmetic the hardware does in one or two.
bool calls_math_function(OpKind fn) {
  switch (fn) {
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Expm1: case OpKind::Log: case OpKind::Log1p:
    case OpKind::Log2: case OpKind::Log10: case OpKind::Sin: case OpKind::Cos: case OpKind::Tan:
    case OpKind::Tanh: case OpKind::Sinh: case OpKind::Cosh: case OpKind::Asin: case OpKind::Acos:
    case OpKind::Atan: case OpKind::Erf: case OpKind::Erfc: case OpKind::Erfinv: case OpKind::Pow:
    case OpKind::Acosh: case OpKind::Asinh: case OpKind::Atanh: case OpKind::Lgamma: case OpKind::Digamma:
    case OpKind::Erfcinv: case OpKind::Ndtri:
    case OpKind::Fmod: case OpKind::Remainder: case OpKind::Atan2: case OpKind::Zeta: case OpKind::Nextafter:
      return true;
    default:
      return false;
  }
}

// ---- Reduction rows (emit_cuda_reduction.cpp) ----
//
// Reducing outer dims of many rows: a thread per row, so that a warp's loads are neighbours along
// the innermost (row) dim, the row in registers when it has at most 16 elements (64 registers of
// loads). Of fewer rows (at least 32, below 32K), with only row stores and the schedule "sliced"
// (schedule_enabled): a lane per row of a tile of 32 and warps splitting the rows' elements.
//
// Otherwise a team of threads takes a row (a serial nest: a chunk of rows, in order; with row
// reductions, a warp per row where the row fits, "warp-rows" below), each thread v consecutive
// elements at a time (v fills 16 bytes of the widest dtype that moves with unit stride in groups
// of v along the one reduced dim, and divides that dim), about four groups of v per thread: a warp
// for short rows (a serial nest: a block of 128), up to a block of 1024 threads. A row of at most
// 8 groups per thread whose loads fit 64 registers stays in registers (read once, every load in
// flight at once); a longer one is looped over by a block of 512 threads. The groups are as many
// as the row needs ("exact-groups"; switched off, rounded up to a power of two, so that one kernel
// serves a range of row lengths: nanoGPT's rows of 768 took four groups where three hold them, and
// its layer norm's loads a third more registers, half the blocks resident).
void choose_team(const LoopNest& nest, const std::vector<AbiField>& fields, AbiNest& n, ReductionSchedule& r) {
  if (!n.inner_reduced && n.rows >= 32 * 1024) {
    n.team = 1;
    int64_t loads = 0;
    for (const ValueExpr& e : nest.values) loads += e.op == ValueOp::Load;
    if (n.inner > 0 && n.inner <= 16 && loads * n.inner <= 64)
      r.per_thread = static_cast<int32_t>(std::bit_ceil(static_cast<uint64_t>(n.inner)));
    return;
  }
  if (!n.inner_reduced && n.rows >= 32 && !nest.serial && schedule_enabled("sliced") &&
      std::all_of(nest.stores.begin(), nest.stores.end(), [](const StoreStmt& s) { return s.row; })) {
    // Fewer rows reducing outer dims (a column reduction's partials, [chunks, C] to [C]): a team
    // per row would read each element alone, a thread per row leave the GPU idle. Sliced: 32
    // neighbouring rows per block, their elements split among up to 32 warps, about 16 a thread,
    // within 32 KB of shared memory for the warps' results.
    int64_t acc_bytes = 0;
    for (const ReduceStmt& red : nest.reductions) acc_bytes += 2 * 32 * std::max<int64_t>(4, dtype_size(red.acc_dtype));
    int slices = 1;
    while (slices < 32 && slices * 16 < n.inner && 2 * slices * acc_bytes <= 32 * 1024) slices *= 2;
    n.team = slices;
    r.slices = slices;
    return;
  }
  const size_t rank = nest.extents.size(), inner = nest.inner_extents.size();
  const int64_t last = static_cast<int64_t>(rank + inner) - 1;
  // The widest vec whose pack is 16 bytes of the widest dtype moving with unit stride in groups of vec.
  int vec = 1;
  std::vector<VarUse> use = var_uses(nest, last);
  for (int v = 16; v >= 2 && vec == 1 && inner == 1; v /= 2) {  // one reduced dim: see RowSchedule
    if (n.inner_last % v != 0) continue;
    std::vector<VarUse> u = group_var_uses(nest, last, v, fields);
    int64_t widest = 0;
    for (const ValueExpr& e : nest.values)
      if (load_in_bounds(e) && u[e.index] == VarUse::Unit) widest = std::max(widest, dtype_size(e.dtype));
    for (const StoreStmt& s : nest.stores)  // (column stores are not moved in packs)
      if (!s.row && !s.column && u[s.index] == VarUse::Unit) widest = std::max(widest, dtype_size(s.dtype));
    if (widest > 0 && widest * v <= 16) {
      vec = v;
      use = std::move(u);
    }
  }
  // "deep" (switchable): about four groups a thread, else one (the team four times as wide).
  const int groups_per_thread = schedule_enabled("deep") ? 4 : 1;
  constexpr int kMaxGroups = 8, kMaxTeam = 1024, kRegisters = 64, kWarpRowsWarps = 4;
  // Warp rows keep each column store's sums in shared memory, [warps][per_thread][32] of its
  // accumulator: at most this much in all (a block's static shared memory is at most 48 KB; four
  // blocks a multiprocessor then take 128 of 228 KB).
  constexpr int64_t kWarpRowsSharedBytes = 32 * 1024;
  // The groups of vec elements a thread of a team of `team` threads takes, rounded up to a power
  // of two unless `exact`, and the registers the row's loads take in it, were they all kept.
  auto row_in_registers = [&](int team, bool exact, int64_t& groups, int64_t& registers) {
    const int64_t needed = std::max<int64_t>(1, (n.inner + team * vec - 1) / (team * vec));
    groups = exact ? needed : static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(needed)));
    registers = 0;
    for (const ValueExpr& e : nest.values)
      if (e.op == ValueOp::Load && nest.index_uses_vars_from(e.index, static_cast<int64_t>(rank)))
        registers += groups * vec * (use[e.index] == VarUse::Unit && load_in_bounds(e) ? dtype_size(e.dtype) : 4) / 4;
    return n.inner > 0 && groups <= kMaxGroups && registers <= kRegisters;
  };
  int64_t groups = 0, registers = 0;
  // Warp rows ("warp-rows", switchable): a serial nest with row reductions whose row fits a warp's
  // registers, and whose column sums fit kWarpRowsSharedBytes, takes a warp per row, four rows of
  // the chunk at once in a block of 128 threads (ReductionSchedule::warps; the groups never
  // rounded up, which would take registers for nothing).
  // A team of 128 per row holds 128 threads' registers for one row in flight and meets at a block
  // barrier for each row reduction; four warps hold four rows in the same registers. (Without row
  // reductions, a bias gradient's column sums alone, the team of 128 takes up to four rows at once.)
  auto warp_rows_shared_bytes = [&](int64_t per_thread) {
    int64_t bytes = 0;
    for (const StoreStmt& s : nest.stores)
      if (s.column) bytes += kWarpRowsWarps * per_thread * 32 * std::max<int64_t>(4, dtype_size(s.dtype));
    return bytes;
  };
  if (nest.serial && !nest.reductions.empty() && schedule_enabled("warp-rows") &&
      row_in_registers(32, true, groups, registers) && warp_rows_shared_bytes(groups * vec) <= kWarpRowsSharedBytes) {
    n.team = 32;
    r.vec = vec;
    r.per_thread = static_cast<int32_t>(groups * vec);
    r.load_registers = static_cast<int>(registers);
    r.registers = 128;  // the row and the chunk's column sums, 4 blocks of 128 per multiprocessor
    r.warps = kWarpRowsWarps;
    return;
  }
  // A serial nest's team is a whole block of at least 128 threads: its teams are its chunks (about
  // 512, passes/split_column_reductions.h), which alone must fill the machine; warps of a block
  // of 256 threads would leave most multiprocessors idle.
  int team = nest.serial ? 128 : 32;
  while (team < kMaxTeam && int64_t{team} * vec * groups_per_thread < n.inner) team *= 2;
  if (row_in_registers(team, schedule_enabled("exact-groups"), groups, registers)) {
    n.team = team;
    r.vec = vec;
    r.per_thread = static_cast<int32_t>(groups * vec);
    r.load_registers = static_cast<int>(registers);
    r.registers = registers <= 48 ? 64 : 96;  // the row, its addresses and the math around it
    // A serial nest also keeps its column accumulators (per_thread per column store) over the
    // chunk: 128 registers, 4 blocks of 128 per multiprocessor, which its ~512 chunks fill.
    if (nest.serial) r.registers = 128;
  } else {
    n.team = 512;
  }
}

// A row held in registers (per_thread > 0): the loads whose address moves with unit stride in
// each group of vec (kernel_ir.h group_var_uses) move in packs, as do the full-shape stores that
// do; the loads, math-function results and random numbers (a Philox block each) that several of
// the row's loops (its phases', then the stores') need stay in registers, so that the row is read
// once, softmax's exp computed once and a dropout's mask drawn once.
void choose_row_registers(const LoopNest& nest, const std::vector<AbiField>& fields, ReductionSchedule& r) {
  const size_t rank = nest.extents.size(), inner = nest.inner_extents.size();
  r.packed.assign(nest.values.size(), 0);
  r.cached.assign(nest.values.size(), 0);
  r.packed_store.assign(nest.stores.size(), 0);
  if (r.per_thread == 0) return;
  if (r.vec > 1) {
    const std::vector<VarUse> use = group_var_uses(nest, static_cast<int64_t>(rank + inner) - 1, r.vec, fields);
    for (size_t id = 0; id < nest.values.size(); ++id)
      r.packed[id] = load_in_bounds(nest.values[id]) && use[nest.values[id].index] == VarUse::Unit;
    for (size_t k = 0; k < nest.stores.size(); ++k)
      r.packed_store[k] = !nest.stores[k].row && !nest.stores[k].column && use[nest.stores[k].index] == VarUse::Unit;
  }
  std::vector<std::vector<char>> needs;  // per loop over the row
  for (int phase = 0; phase < nest.phase_count(); ++phase) needs.push_back(nest.needed_values(nest.phase_operands(phase)));
  std::vector<int> stored;
  for (const StoreStmt& s : nest.stores)
    if (!s.row) stored.push_back(s.value);
  needs.push_back(nest.needed_values(stored));
  std::vector<char> inner_value;
  std::vector<int> ready;
  nest.scope_of_values(inner_value, ready);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    int uses = 0;
    for (const auto& need : needs) uses += need[id];
    const ValueExpr& e = nest.values[id];
    const bool costly = e.op == ValueOp::Load || e.op == ValueOp::Uniform ||
                        (e.op == ValueOp::Apply && calls_math_function(e.fn));
    r.cached[id] = costly && uses >= 2 && inner_value[id];
  }
  // Switchable (schedule_cuda.h schedule_enabled). "prefetch": a serial nest reads its rows one
  // ahead where the row's loads, held twice, take at most half the registers (beyond, ptxas spills
  // Llama's norm backward: 420 bytes). "preload": a row waits for memory once: its scalar loads (a
  // norm's saved statistics) go before its first loop, and, where every load of the row kept takes
  // less than half the registers, the packed loads of the later loops (a residual read by the
  // stores, a norm's weight) are read by the first. At half, ptxas spills the size-specialized
  // kernel (specialize_kernel.h), which runs in the steps: nanoGPT's cross-entropy backward, a
  // row of 50,304 bf16 in 32 of a 1,024-thread team's 64 registers, spilled 280 bytes a thread
  // (56 without the preload) and took 1.36 ms in the step against 0.81 ms for the generic kernel.
  r.prefetch = nest.serial && schedule_enabled("prefetch") && 4 * r.load_registers <= r.registers;
  // "async": the prefetched rows come through a ring in shared memory, several rows ahead, by
  // asynchronous copies (cp.async, sm_80 and later), where the ring fits (emit_cuda_reduction.cpp):
  // one row ahead in registers left the norm backward kernels waiting on memory at each row
  // (nanoGPT's at 36% of DRAM bandwidth, Llama's at 50%, a quarter of the threads resident).
  // Without registers to spare, a ring may still fit (Llama's norm backward, whose rows held twice
  // in registers spilled).
  r.async_prefetch = nest.serial && r.warps == 0 && schedule_enabled("prefetch") && schedule_enabled("async");
  r.preloaded.assign(nest.values.size(), 0);
  r.preload_row_values = schedule_enabled("preload");
  // Warp rows preload none: the other warps' rows are in flight while a row's later loops read
  // (nanoGPT's norm backward spilled 48 bytes with its input preloaded, none without).
  if (!r.preload_row_values || r.warps > 0 || 2 * r.load_registers >= r.registers) return;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    if (!r.packed[id] || ready[id] != 0 || needs[0][id]) continue;
    bool later = false;
    for (size_t l = 1; l < needs.size(); ++l) later = later || needs[l][id];
    if (!later) continue;
    r.preloaded[id] = 1;
    r.cached[id] = 1;
  }
}

// ---- Vector schedules (emit_cuda.cpp) ----

// Packs each thread keeps in flight per pass of the vector loops: U independent 16-byte loads per
// buffer before the first use. 2, and at most as many as keep the packs of all `vector_loads`
// within 48 registers (a RoPE reads eight packs a step). With a block per grain (the launch below)
// the blocks keep enough in flight: on the H200, in blocks of 128 threads, one pack per thread
// made the merge-heads permute 10% slower and four made it 11% slower (measured while the packs
// still looped over the grid and loaded under `break`, before the unconditional loads).
int packs_in_flight(int vector_loads) {
  constexpr int kPacks = 2, kPackRegisters = 4, kLoadRegisters = 48;
  return std::clamp(kLoadRegisters / std::max(1, kPackRegisters * vector_loads), 1, kPacks);
}

// A flat nest: every load moves packs.
VectorSchedule flat_vector(const LoopNest& nest) {
  VectorSchedule plan;
  plan.loads.assign(nest.values.size(), 0);
  for (size_t id = 0; id < nest.values.size(); ++id) plan.loads[id] = nest.values[id].op == ValueOp::Load;
  plan.v = vector_width(nest, plan.loads);
  plan.u = packs_in_flight(count(plan.loads));
  return plan;
}

// Whether a nest that is not flat can move packs along its innermost loop dim: every store's
// address is (something independent of the innermost var) + that var.
bool row_vector_ok(const LoopNest& nest, const std::vector<VarUse>& use) {
  if (nest.flat || nest.extents.empty() || nest.stores.empty()) return false;
  for (const StoreStmt& s : nest.stores)
    if (use[s.index] != VarUse::Unit) return false;
  return true;
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

// The loads of a row-vector nest that move whole packs of V: address (invariant + innermost var),
// and a guard, if any, with one answer per aligned group of V (a cat's source ranges that start
// at multiples of V: each pack comes from one source) or that only says whether the value is
// used (pred_in_bounds: the pack is read whole).
VectorSchedule row_vector(const LoopNest& nest, const std::vector<VarUse>& use, const std::vector<AbiField>& fields) {
  const int64_t last = static_cast<int64_t>(nest.extents.size()) - 1;
  VectorSchedule plan;
  plan.loads.assign(nest.values.size(), 0);
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    plan.loads[id] = e.op == ValueOp::Load && use[e.index] == VarUse::Unit;
  }
  for (bool dropped = true; dropped;) {  // a guarded load dropped may widen V: check the others again
    dropped = false;
    plan.v = vector_width(nest, plan.loads);
    const std::vector<VarUse> group_use = group_var_uses(nest, last, plan.v, fields);
    for (size_t id = 0; id < nest.values.size(); ++id) {
      const int pred = nest.values[id].pred;
      if (plan.loads[id] && pred >= 0 && !nest.values[id].pred_in_bounds && group_use[pred] != VarUse::Invariant &&
          group_use[pred] != VarUse::Grouped) {
        plan.loads[id] = 0;
        dropped = true;
      }
    }
  }
  plan.u = packs_in_flight(count(plan.loads));
  plan.row_tile = row_tile_dim(nest, plan.loads);
  plan.row_tile_log = plan.row_tile >= 0 ? kRowTileLog : 0;
  return plan;
}

// Threads resident per multiprocessor for a vector schedule: 1,536 when its packs in flight take at
// most 16 registers a thread (42 registers; 48 KB in flight per multiprocessor), else 1,024 (64
// registers: a RoPE's eight loads a step); as blocks of `block` threads.
int vector_blocks_per_sm(const VectorSchedule& plan, int block) {
  constexpr int kPackRegisters = 4;
  return (count(plan.loads) * plan.u * kPackRegisters <= 16 ? 1536 : 1024) / block;
}

// Threads per block of a kernel whose nests are vector or plain loops: 128, so that a block moves
// 128 x U 16-byte packs of each tensor in its one pass (4 KB at U = 2). On the H200, against blocks
// of 256 (same threads resident, generated kernels, same run): the 1 GiB chain 97.5% -> 99.7% of
// the copy ceiling, RoPE 92.8% -> 97.3%, bias + gelu 89.6% -> 92.0%, the MLP gelu 96.5% -> 99.1%,
// the merge-heads consumer 94.9% -> 96.0%, the producer 95.8% -> 95.0%. One pack per thread was
// worse for all but the chain (the producer 83-86%). Both measured with the grid loop that
// the one-pass vector nests replaced.
constexpr int kVectorBlock = 128;

// ---- Tiles (emit_cuda_tiled.cpp) ----

// The loop dim p < rank - 1 that unguarded loads walk with unit stride (the input's innermost dim
// is not the output's): such a nest is tiled; -1 when there is none.
int transposed_dim(const LoopNest& nest) {
  const int last = static_cast<int>(nest.extents.size()) - 1;
  if (nest.is_reduction() || nest.flat || last < 1) return -1;
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load && e.pred < 0 && e.unit_var >= 0 && e.unit_var != last) return e.unit_var;
  return -1;
}

// The loads a tiled nest reads through shared memory: unguarded, unit stride along loop dim p.
std::vector<int> tiled_loads(const LoopNest& nest, int p) {
  std::vector<int> tiled;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op == ValueOp::Load && e.pred < 0 && e.unit_var == p) tiled.push_back(static_cast<int>(id));
  }
  return tiled;
}

// Bytes of shared memory per tile element: one per tiled load; a tile of side t (one column of
// padding against bank conflicts).
int64_t tile_element_bytes(const LoopNest& nest, int p) {
  int64_t bytes = 0;
  for (int id : tiled_loads(nest, p)) bytes += dtype_size(nest.values[id].dtype);
  return bytes;
}
int64_t tile_bytes(int64_t element_bytes, int t) { return element_bytes * t * (t + 1); }

// The nests with a transposed dim share 40 KB of static shared memory (a kernel can declare at
// most 48 KB) equally, each taking the largest side of 64, 32 or 16 that fits its share; one whose
// 16-wide tiles do not fit is not tiled.
std::vector<int> tile_sides(const KernelIR& ir) {
  std::vector<int> sides(ir.nests.size(), 0);
  int64_t tiled = 0;
  for (const LoopNest& nest : ir.nests) tiled += transposed_dim(nest) >= 0;
  if (tiled == 0) return sides;
  const int64_t share = 40 * 1024 / tiled;
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    const int p = transposed_dim(ir.nests[n]);
    if (p < 0) continue;
    const int64_t bytes = tile_element_bytes(ir.nests[n], p);
    for (int t = 64; t >= 16 && sides[n] == 0; t /= 2)
      if (tile_bytes(bytes, t) <= share) sides[n] = t;
  }
  return sides;
}

// The packed variant for a nest tiled along p with side t in blocks of `block` threads, when every
// tiled load is invariant + the var of p, every store invariant + the innermost var, the block's
// threads tile the T x T tile in whole packs, and a thread's packs of the tile fit 40 registers
// (the limit of the staged element tiles).
std::optional<PackedTile> packed_tile(const LoopNest& nest, int p, int t, int block) {
  const int64_t last = static_cast<int64_t>(nest.extents.size()) - 1;
  const std::vector<VarUse> use_p = var_uses(nest, p), use_last = var_uses(nest, last);
  PackedTile plan;
  plan.last.assign(nest.values.size(), 0);
  std::vector<char> packed(nest.values.size(), 0);
  for (int id : tiled_loads(nest, p)) {
    if (use_p[nest.values[id].index] != VarUse::Unit) return std::nullopt;
    packed[id] = 1;
  }
  for (const StoreStmt& s : nest.stores)
    if (use_last[s.index] != VarUse::Unit) return std::nullopt;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    plan.last[id] = e.op == ValueOp::Load && e.pred < 0 && !packed[id] && use_last[e.index] == VarUse::Unit;
    packed[id] |= plan.last[id];
  }
  plan.v = vector_width(nest, packed);
  const int columns = t / plan.v;
  if (columns < 1 || block % columns != 0) return std::nullopt;
  plan.rows = block / columns;
  if (plan.rows > t || t % plan.rows != 0) return std::nullopt;
  int64_t bytes = 0;  // of a thread's packs of the tile
  for (size_t id = 0; id < nest.values.size(); ++id)
    if (packed[id]) bytes += int64_t{t} * t / block * dtype_size(nest.values[id].dtype);
  if (bytes > 40 * 4) return std::nullopt;
  return plan;
}

// A tiled nest's phases in blocks of `block` threads: element tiles cover `rows` tile rows a pass
// of the block, `per_thread` positions a thread; all of a tile's loads go out before any is used
// (staged) when they fit 40 registers (ptxas otherwise alternates each load with its shared-memory
// store, so that a thread waits for its loads one after another).
TileSchedule tile_schedule(const LoopNest& nest, int p, int t, int block) {
  TileSchedule tile;
  tile.dim = p;
  tile.side = t;
  tile.loads = tiled_loads(nest, p);
  tile.rows = std::max(1, block / t);
  tile.per_thread = (t + tile.rows - 1) / tile.rows;
  int64_t registers = 0;  // what holding every load of a tile in registers takes
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load && e.pred < 0) registers += tile.per_thread * std::max<int64_t>(1, dtype_size(e.dtype) / 4);
  tile.staged = registers <= 40;
  tile.packed = packed_tile(nest, p, t, block);
  return tile;
}

// ---- The launch shape ----
//
// Vector schedules keep 1,536 or 1,024 threads resident (vector_blocks_per_sm); tiled ones as many
// blocks of 256 as their shared memory allows, up to 4; a reduction nest as many as its registers
// per thread allow (ReductionSchedule::registers). Kernels with only plain loops set none.
//
// Vector, tiled and reduction nests also get their grain, the points (rows) one block covers in
// one pass of its loop (V x U x threads, a tile, or a row per team): pack_launch gives them a
// block per grain, so that each block makes one pass and the hardware schedules the blocks (on
// the H200 a pass per block moves 5 to 8% more bytes per second than a grid of one wave whose
// blocks loop, and leaves no wave's tail of rows).
void choose_launch(const KernelIR& ir, KernelSchedule& s) {
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (s.nests[n].kind != NestKind::Reduction) continue;
    AbiNest& abi = s.abi.nests[n];  // 64K registers per multiprocessor; a row per team
    s.abi.blocks_per_sm = std::max(1, 65536 / (s.abi.block_size * s.nests[n].reduction.registers));
    // Warp rows: a block per chunk.
    abi.grain = s.nests[n].reduction.warps > 0 ? 1 : std::max(1, s.abi.block_size / std::max(1, abi.team));
    return;
  }
  auto is = [&](NestKind k) {
    return std::any_of(s.nests.begin(), s.nests.end(), [&](const NestSchedule& n) { return n.kind == k; });
  };
  const bool tiled = is(NestKind::Tiled);
  if (!tiled && (is(NestKind::FlatVector) || is(NestKind::RowVector))) s.abi.block_size = kVectorBlock;
  int blocks = 0;
  auto take = [&](int b) { blocks = blocks == 0 ? b : std::min(blocks, b); };
  int64_t shared = 0;
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    const NestSchedule& nest = s.nests[n];
    AbiNest& abi = s.abi.nests[n];
    if (nest.kind == NestKind::Tiled) {
      shared += tile_bytes(tile_element_bytes(ir.nests[n], nest.tile.dim), nest.tile.side);
      abi.grain = int64_t{nest.tile.side} * nest.tile.side;
    } else if (nest.kind == NestKind::FlatVector || nest.kind == NestKind::RowVector) {
      abi.grain = int64_t{nest.vector.v} * nest.vector.u * s.abi.block_size;
      take(vector_blocks_per_sm(nest.vector, s.abi.block_size));
    }
  }
  // 228 KB of shared memory per multiprocessor on sm_90, 1 KB of it reserved per block.
  if (shared > 0) take(static_cast<int>(std::clamp<int64_t>(228 * 1024 / (shared + 1024), 1, 4)));
  s.abi.blocks_per_sm = blocks;
}

// ---- Dividers ----

// With 32-bit index math, the multiply-high divider fields of ceil(size / b) for each (size field,
// b) of `sizes` but the first (the outermost dim takes what is left), which the host computes at
// launch: a block that makes one pass would otherwise spend 64-bit divisions setting them up.
std::vector<int> dividers(KernelAbi& abi, const std::vector<std::pair<int, int64_t>>& sizes) {
  std::vector<int> fields(sizes.size(), -1);
  for (size_t d = 1; d < sizes.size(); ++d)
    fields[d] = abi_field(abi, AbiFieldKind::Divider, sizes[d].first, static_cast<int32_t>(sizes[d].second));
  return fields;
}

void choose_dividers(const LoopNest& nest, KernelAbi& abi, NestSchedule& s) {
  const size_t rank = nest.extents.size();
  std::vector<std::pair<int, int64_t>> sizes;
  switch (s.kind) {
    case NestKind::Loop: case NestKind::FlatVector: case NestKind::Walk:
      return;
    case NestKind::RowVector:  // the loop dims, the innermost counted in packs
      for (size_t d = 0; d < rank; ++d) sizes.emplace_back(nest.extents[d], d + 1 == rank ? s.vector.v : 1);
      s.dividers = dividers(abi, sizes);
      if (s.vector.row_tile > 0)
        s.row_tile_divider = abi_field(abi, AbiFieldKind::Divider, nest.extents[s.vector.row_tile], 1 << s.vector.row_tile_log);
      return;
    case NestKind::Tiled:  // the other dims, then the tiles along the tiled dim and the innermost
      for (size_t d = 0; d + 1 < rank; ++d)
        if (static_cast<int>(d) != s.tile.dim) sizes.emplace_back(nest.extents[d], 1);
      sizes.emplace_back(nest.extents[static_cast<size_t>(s.tile.dim)], s.tile.side);
      sizes.emplace_back(nest.extents[rank - 1], s.tile.side);
      s.dividers = dividers(abi, sizes);
      return;
    case NestKind::Reduction:  // the row dims (a serial nest: but the serial one)
      for (size_t d = 0; d < (nest.serial ? rank - 1 : rank); ++d) sizes.emplace_back(nest.extents[d], 1);
      s.dividers = dividers(abi, sizes);
      return;
  }
}

}  // namespace

KernelSchedule schedule_cuda(const KernelSpec& spec, const KernelIR& ir) {
  KernelSchedule s;
  s.target = Target::Cuda;
  s.abi = ir.abi;
  s.abi.index32 = index32_ok(spec, ir.abi);
  s.nests.resize(ir.nests.size());
  // Reduction nests: a team per row, and a block as large as the team.
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    if (!ir.nests[n].is_reduction()) continue;
    NestSchedule& nest = s.nests[n];
    nest.kind = NestKind::Reduction;
    choose_team(ir.nests[n], s.abi.fields, s.abi.nests[n], nest.reduction);
    choose_row_registers(ir.nests[n], s.abi.fields, nest.reduction);
    if (nest.reduction.slices > 0)
      s.abi.block_size = 32 * nest.reduction.slices;
    else if (nest.reduction.warps > 0)
      s.abi.block_size = 32 * nest.reduction.warps;
    else if (s.abi.nests[n].team > 32)
      s.abi.block_size = s.abi.nests[n].team;
  }
  // Pointwise nests: tiles for transposes, else packs where the buffers allow them.
  const std::vector<int> sides = tile_sides(ir);
  for (size_t n = 0; n < ir.nests.size(); ++n) {
    const LoopNest& nest = ir.nests[n];
    const int64_t rank = static_cast<int64_t>(nest.extents.size());
    if (nest.is_reduction()) continue;
    if (nest.scan) {  // a thread per line (the lowering counted the lines as the nest's rows)
      s.nests[n].kind = NestKind::Walk;
      continue;
    }
    if (nest.scatter) {  // a plain loop of atomic adds, or a walk of the scatter dim per thread
      if (nest.in_order && !nest.extents.empty()) {
        s.nests[n].kind = NestKind::Walk;
        const int64_t along = s.abi.fields.at(static_cast<size_t>(nest.extents.at(static_cast<size_t>(nest.walk_dim)))).value;
        AbiNest& abi = s.abi.nests[n];
        abi.rows = along == 0 ? 0 : abi.rows / along;  // a thread per position of the other dims
      }
      continue;
    }
    if (sides[n] > 0) {
      s.nests[n].kind = NestKind::Tiled;
      s.nests[n].tile.dim = transposed_dim(nest);
      s.nests[n].tile.side = sides[n];
    } else if (nest.flat && !nest.stores.empty()) {
      s.nests[n].kind = NestKind::FlatVector;
      s.nests[n].vector = flat_vector(nest);
    } else if (!nest.flat && rank > 0) {
      const std::vector<VarUse> use = var_uses(nest, rank - 1);
      if (row_vector_ok(nest, use)) {
        s.nests[n].kind = NestKind::RowVector;
        s.nests[n].vector = row_vector(nest, use, s.abi.fields);
      }
    }
  }
  choose_launch(ir, s);
  // The tiles' phases follow the block size.
  for (size_t n = 0; n < ir.nests.size(); ++n)
    if (s.nests[n].kind == NestKind::Tiled)
      s.nests[n].tile = tile_schedule(ir.nests[n], s.nests[n].tile.dim, s.nests[n].tile.side, s.abi.block_size);
  if (s.abi.index32)
    for (size_t n = 0; n < ir.nests.size(); ++n) choose_dividers(ir.nests[n], s.abi, s.nests[n]);
  finalize_abi(s.abi, s.abi.index32);
  return s;
}

namespace {

// Whether the comma-separated list in environment variable `variable` names `name`.
bool listed(const char* variable, std::string_view name) {
  const char* env = std::getenv(variable);
  for (std::string_view rest = env ? env : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == name) return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return false;
}

}  // namespace

bool schedule_enabled(std::string_view name) {
  if (name == "async") return listed("VF_ENABLE_SCHEDULES", name) && !listed("VF_DISABLE_SCHEDULES", name);
  return !listed("VF_DISABLE_SCHEDULES", name);
}

}  // namespace vf
