// The CUDA schedule of a reduction nest (kernel_ir.h): a team of threads (a warp, a block of up to
// 1024 threads, or one thread when many rows reduce outer dims; schedule_cuda.cpp chooses) takes
// a row at a time, in a grid-stride loop over rows. A sliced nest (fewer rows reducing outer dims)
// takes tiles of 32 neighbouring rows instead, a lane per row and a warp per slice of the rows'
// elements, so that a warp's loads are neighbours. Each thread accumulates its share of the
// reduced elements; the team combines the partial results with warp shuffles (and shared memory
// across the block's warps), so that every thread of the team holds the row's result, and the
// next phase or the stores use it. Row stores are made by the team's first thread.
//
// A row of at most team * per_thread elements is held in registers (RowSchedule below): read
// once however many phases the nest has, in 16-byte packs when the row is aligned, every load of
// a loop in flight at once. An unaligned row takes the strided loop.
#include <algorithm>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "codegen/emit_source.h"

namespace vf {
namespace {

// The most shared memory a serial nest's ring of rows ahead may take (a block's static shared
// memory is at most 48 KB; four blocks of 128 threads a multiprocessor then take 160 of 228 KB).
constexpr int64_t kAsyncRingBytes = 40 * 1024;

// A group accumulator starts at the exact identity of a floating sum, -0 (x + -0 is x for every x,
// so the group's first add folds away); a row's accumulator keeps +0, the sum of no elements.
std::string group_identity(const ReduceStmt& r) {
  return r.op == OpKind::Sum && is_floating(r.acc_dtype) ? "-" + reduce_identity(r) : reduce_identity(r);
}

// Combines acc over the team; every thread ends with the team's result.
void emit_team_reduce(const ReduceStmt& r, int k, int team, const std::string& indent, std::string& out) {
  if (team == 1) return;
  const std::string acc = "acc" + std::to_string(k);
  out += indent + "for (int o = 16; o > 0; o >>= 1) " + acc + " = " +
         reduce_combine(r, acc, "vf_shfl_xor(" + acc + ", o)") + ";\n";
  if (team == 32) return;
  // Rows alternate between two buffers (`parity`), so that the next row's writes need no barrier
  // after this row's reads: the barrier of the row in between orders them.
  const std::string smem = "red" + std::to_string(k), buf = smem + "[parity]";
  out += indent + "{\n";
  out += indent + "  __shared__ " + compute_type(r.acc_dtype) + " " + smem + "[2][32];\n";
  out += indent + "  if (threadIdx.x % 32 == 0) " + buf + "[threadIdx.x / 32] = " + acc + ";\n";
  out += indent + "  __syncthreads();\n";
  out += indent + "  " + acc + " = " + buf + "[0];\n";
  // A block-wide team: the block's team / 32 warps (a constant trip count, unrolled).
  out += "#pragma unroll\n";
  out += indent + "  for (int w = 1; w < " + std::to_string(team / 32) + "; ++w) " + acc + " = " +
         reduce_combine(r, acc, buf + "[w]") + ";\n";
  out += indent + "}\n";
}

// Combines acc over a sliced nest's slices (ReductionSchedule::slices: warp w of the block holds
// slice w of the row that its lane takes); every thread ends with its row's result. Tiles alternate
// between two buffers (`parity`), as rows do in emit_team_reduce.
void emit_slice_reduce(const ReduceStmt& r, int k, int slices, const std::string& indent, std::string& out) {
  if (slices == 1) return;
  const std::string acc = "acc" + std::to_string(k), smem = "red" + std::to_string(k), buf = smem + "[parity]";
  out += indent + "{\n";
  out += indent + "  __shared__ " + compute_type(r.acc_dtype) + " " + smem + "[2][" + std::to_string(slices) + "][32];\n";
  out += indent + "  " + buf + "[threadIdx.x / 32][threadIdx.x % 32] = " + acc + ";\n";
  out += indent + "  __syncthreads();\n";
  out += indent + "  " + acc + " = " + buf + "[0][threadIdx.x % 32];\n";
  out += "#pragma unroll\n";
  out += indent + "  for (int w = 1; w < " + std::to_string(slices) + "; ++w) " + acc + " = " +
         reduce_combine(r, acc, buf + "[w][threadIdx.x % 32]") + ";\n";
  out += indent + "}\n";
}

// One row of a reduction nest under one schedule. With per_thread > 0, thread `lane` of the team
// takes groups of v consecutive elements, group g starting at (g * team + lane) * v, and the loads
// that several loops over the row need stay in registers (read once): as packs pk<id>[g] when
// packed (v > 1 and the address moves with unit stride in each group: kernel_ir.h group_var_uses), else as
// cache<id>[it] in the compute type; so do the math-function results that several loops need
// (softmax's exp: computed once). Packed loads and stores move v elements at once; the caller
// emits this schedule only for rows whose first element is aligned to the pack. Iterations past
// the row's end read group 0 again and neither combine nor store (`in`): the loops have no
// branch, so every load of an unrolled loop can be in flight at once. With per_thread == 0, the
// team's threads stride over the row.
class RowSchedule {
 public:
  // The row in registers as `r` (ReductionSchedule) says, or, with per_thread 0, the strided loop.
  RowSchedule(const LoopNest& nest, ScopedEmitter& em, const std::vector<std::string>& vars, const std::string& prefix,
              int team, const ReductionSchedule& r)
      : nest_(nest), em_(em), vars_(vars), p_(prefix), team_(team), per_thread_(r.per_thread),
        packed_(r.packed), packed_store_(r.packed_store), cached_(r.cached), preloaded_(r.preloaded),
        preload_row_values_(r.preload_row_values && r.per_thread > 0), async_allowed_(r.async_prefetch),
        v_(r.per_thread > 0 ? r.vec : 1) {
    for (int phase = 0; phase < nest.phase_count(); ++phase) needs_.push_back(nest.needed_values(nest.phase_operands(phase)));
    std::vector<int> stored;
    for (const StoreStmt& s : nest.stores)
      if (!s.row) stored.push_back(s.value);
    needs_.push_back(nest.needed_values(stored));
    if (per_thread_ == 0) {  // the strided loop: nothing packed or cached
      packed_.assign(nest.values.size(), 0);
      cached_.assign(nest.values.size(), 0);
      packed_store_.assign(nest.stores.size(), 0);
    }
    preloaded_.resize(nest.values.size(), 0);
  }

  // The (dtype, param, index) of the packed loads and stores.
  std::vector<std::tuple<DType, int, int>> packed_addresses() const {
    std::vector<std::tuple<DType, int, int>> at;
    for (size_t id = 0; id < nest_.values.size(); ++id)
      if (packed_[id]) at.emplace_back(nest_.values[id].dtype, nest_.values[id].param, nest_.values[id].index);
    for (size_t k = 0; k < nest_.stores.size(); ++k)
      if (packed_store_[k]) at.emplace_back(nest_.stores[k].dtype, nest_.stores[k].param, nest_.stores[k].index);
    return at;
  }

  void emit(std::string& out, const std::string& indent) {
    for (size_t id = 0; id < nest_.values.size(); ++id) {
      if (!cached_[id]) continue;
      const ValueExpr& e = nest_.values[id];
      out += indent + (packed_[id] ? pack_type(e.dtype, v_) + " pk" + std::to_string(id) + "[" + std::to_string(groups()) + "]"
                                   : std::string(compute_type(e.dtype)) + " cache" + std::to_string(id) + "[" +
                                         std::to_string(per_thread_) + "]") +
             ";\n";
    }
    for (size_t k = 0; k < nest_.stores.size(); ++k)
      if (packed_store_[k])
        store_override_[static_cast<int>(k)] = "ps" + std::to_string(k) + ".e[j] = " +
                                               store_value(nest_, nest_.stores[k]) + ";";
    for (size_t k = 0; column_registers && k < nest_.stores.size(); ++k) {
      const StoreStmt& s = nest_.stores[k];
      if (!s.column) continue;
      ReduceStmt r;
      r.op = s.op;
      r.acc_dtype = s.dtype;
      const std::string acc = column_at(k, "warp", "it", "lane"), v = "v" + std::to_string(s.value);
      // Unguarded: a position past the row's end accumulates what is never stored.
      store_override_[static_cast<int>(k)] = acc + " = (" + column_first + ") ? (" + compute_type(s.dtype) + ")" + v +
                                             " : " + reduce_combine(r, acc, v) + ";";
    }
    if (!serial_var_.empty() && stages_ > 0) {
      // This row's reads, from its stage of the ring once its copies have landed; then the copies
      // of the row stages_ - 1 ahead, into the stage the row before freed.
      const std::string S = std::to_string(stages_), stage = "(int)(" + serial_var_ + " % " + S + ")";
      out += indent + "vf_cp_async_wait<" + std::to_string(stages_ - 2) + ">();\n";
      std::unordered_map<int, std::string> from_ring;
      for (int id : prefetch_values_)
        from_ring[id] = from_memory(nest_.values[id].dtype, "vfs" + std::to_string(id) + "[" + stage + "][threadIdx.x]");
      em_.define(prefetch_values_, {}, true, indent, out, &from_ring);
      for (int id : prefetch_packs_) {
        const std::string k = std::to_string(id);
        out += "#pragma unroll\n";
        out += indent + "for (int g = 0; g < " + std::to_string(groups()) + "; ++g) pk" + k + "[g] = vfr" + k + "[" +
               stage + "][g][threadIdx.x];\n";
        override_[id] = from_memory(nest_.values[id].dtype, "pk" + k + "[g].e[j]");
      }
      // The stage is named before emit_prefetch shadows the serial var with the row ahead.
      const std::string ahead = serial_var_ + " + " + std::to_string(stages_ - 1);
      out += indent + "if (" + ahead + " < " + serial_extent_ + ") {\n";
      out += indent + "  const int next_stage = (int)((" + ahead + ") % " + S + ");\n";
      emit_prefetch(ahead, out, indent + "  ", "next_stage");
      out += indent + "}\n";
      out += indent + "vf_cp_async_commit();\n";
    } else if (!serial_var_.empty()) {
      // This row's reads, from the registers the row before filled; then the next row's reads.
      std::unordered_map<int, std::string> from_registers;
      for (int id : prefetch_values_) from_registers[id] = "pfv" + std::to_string(id);
      em_.define(prefetch_values_, {}, true, indent, out, &from_registers);
      for (int id : prefetch_packs_) {
        const std::string k = std::to_string(id);
        out += "#pragma unroll\n";
        out += indent + "for (int g = 0; g < " + std::to_string(groups()) + "; ++g) pk" + k + "[g] = pf" + k + "[g];\n";
        override_[id] = from_memory(nest_.values[id].dtype, "pk" + k + "[g].e[j]");
      }
      const std::string next = serial_var_ + " + " + serial_step_;
      out += indent + "if (" + next + " < " + serial_extent_ + ") {\n";
      emit_prefetch(next, out, indent + "  ");
      out += indent + "}\n";
    }
    if (preload_row_values_) {
      // The row's scalar loads, before the first loop (in flight with it).
      em_.define(row_scalar_loads(), {}, true, indent, out);
    }
    ReductionRowHooks hooks;
    hooks.inner_loop = [&](const std::function<void(const std::string&)>& body) { loop(body, indent, out); };
    hooks.after_phase = [&](int phase) {
      for (size_t k = 0; k < nest_.reductions.size(); ++k) {
        if (nest_.reductions[k].phase != phase) continue;
        if (sliced)
          emit_slice_reduce(nest_.reductions[k], static_cast<int>(k), team_, indent, out);
        else
          emit_team_reduce(nest_.reductions[k], static_cast<int>(k), team_, indent, out);
      }
    };
    hooks.row_guard = sliced ? "if (lane == 0 && row_in)" : "if (lane == 0)";
    hooks.column_first = column_first;
    if (per_thread_ > 0) {
      hooks.element_guard = "in";
      hooks.group_accumulator = "gacc";
    }
    hooks.value_override = &override_;
    hooks.store_override = &store_override_;
    emit_reduction_row(nest_, em_, hooks, indent, out);
  }

 int vec() const { return v_; }

  // A sliced nest (ReductionSchedule::slices): the team is the row's slices, one per warp, and
  // only rows inside the nest (`row_in`) store.
  bool sliced = false;

  // A serial nest's packed chunk with ReductionSchedule::prefetch: the loads of the first loop
  // and the row's scalar loads are read one row ahead (pf<id>[g], pfv<id>), so that a row's reads
  // are in flight while the row before it reduces and stores. With async_prefetch, where that
  // does not fit in registers (`in_registers` false), the scalars are of 4 or 8 bytes and a ring
  // of at least three rows fits kAsyncRingBytes, they are copied instead into a ring of `stages_`
  // rows in shared memory (vfr<id>[stage][g][thread],
  // vfs<id>[stage][thread]) by cp.async, stages_ - 1 rows ahead: each thread copies and reads back
  // only its own slots, so no barrier is needed, only the wait for its own copies. Without a ring,
  // the rows are read one ahead in registers where `in_registers` (ReductionSchedule::prefetch),
  // else not ahead at all. Call before the serial loop, inside the chunk, with the
  // kernel's block size: declares the registers or the ring and reads the chunk's first row (or rows).
  // Warp rows (`warps` > 0): a warp's rows are first_row, first_row + warps, ...; no ring.
  void start_prefetch(const std::string& serial_var, const std::string& serial_extent, int block, bool in_registers,
                      int warps, const std::string& first_row, std::string& out, const std::string& indent) {
    VF_INTERNAL_CHECK(warps == 0 || !async_allowed_, "a ring of rows ahead with warp rows (", warps, " warps)");
    serial_step_ = warps > 0 ? std::to_string(warps) : "1";
    const std::vector<char> cached = cached_;
    // Unguarded loads at addresses that no loaded value gives (nothing they need is read first).
    auto plain = [&](int id) {
      const ValueExpr& e = nest_.values[id];
      std::vector<int> gathered;
      nest_.gathered_values(e.index, gathered);
      return e.pred < 0 && gathered.empty();
    };
    for (size_t id = 0; id < nest_.values.size(); ++id) {
      const ValueExpr& e = nest_.values[id];
      if (e.op != ValueOp::Load || !packed_[id] || !(needs_[0][id] || preloaded_[id]) || !plain(static_cast<int>(id)))
        continue;
      prefetch_packs_.push_back(static_cast<int>(id));
      cached_[id] = 1;
    }
    for (int id : row_scalar_loads())
      if (plain(id)) prefetch_values_.push_back(id);
    // The ring only where the rows ahead do not fit in registers: where they do, the register
    // prefetch was faster (H100, nanoGPT's norm backward: 36.5 us, with a ring 68.3 us; Llama's,
    // which has no register prefetch, 96.4 us without a ring, 93.0 with one).
    if (!in_registers && async_allowed_) choose_stages(block);
    if (!in_registers && async_allowed_ && stages_ == 0) {
      // Without the packs only later loops read (preloaded: they are read in the first loop, as
      // without the prefetch) and those every row reads alike (a norm's weight: from the L1
      // cache after the first row), the ring may fit (Llama's norm backward, rows of 2,048).
      const int64_t serial = static_cast<int64_t>(nest_.extents.size()) - 1;
      std::vector<int> first;
      for (int id : prefetch_packs_)
        if (needs_[0][id] && nest_.index_uses_var(nest_.values[id].index, serial)) first.push_back(id);
      if (first.size() < prefetch_packs_.size()) {
        const std::vector<int> all = std::exchange(prefetch_packs_, first);
        choose_stages(block);
        if (stages_ == 0) prefetch_packs_ = all;
      }
    }
    if (stages_ == 0 && !in_registers) {
      prefetch_packs_.clear();
      prefetch_values_.clear();
      cached_ = cached;
      return;
    }
    serial_var_ = serial_var;
    serial_extent_ = serial_extent;
    const std::string G = std::to_string(groups());
    if (stages_ > 0) {
      const std::string S = std::to_string(stages_), B = std::to_string(block);
      for (int id : prefetch_packs_)
        out += indent + "__shared__ " + pack_type(nest_.values[id].dtype, v_) + " vfr" + std::to_string(id) + "[" + S +
               "][" + G + "][" + B + "];\n";
      for (int id : prefetch_values_)
        out += indent + "__shared__ " + memory_type(nest_.values[id].dtype) + " vfs" + std::to_string(id) + "[" + S +
               "][" + B + "];\n";
      out += indent + "for (int s = 0; s < " + std::to_string(stages_ - 1) + "; ++s) {\n";
      out += indent + "  if (s < " + serial_extent_ + ") {\n";
      emit_prefetch("s", out, indent + "    ", "s");
      out += indent + "  }\n";
      out += indent + "  vf_cp_async_commit();\n";
      out += indent + "}\n";
      return;
    }
    for (int id : prefetch_packs_)
      out += indent + pack_type(nest_.values[id].dtype, v_) + " pf" + std::to_string(id) + "[" + G + "];\n";
    for (int id : prefetch_values_)
      out += indent + compute_type(nest_.values[id].dtype) + " pfv" + std::to_string(id) + ";\n";
    out += indent + "if (" + first_row + " < " + serial_extent_ + ") {\n";
    emit_prefetch(first_row, out, indent + "  ");
    out += indent + "}\n";
  }
  std::string column_first;  // a serial nest: the condition that the row is its chunk's first
  // A serial nest's column stores kept over the chunk's rows (the packed schedule): in registers,
  // cacc<k>[it]; with warp rows (column_warps > 0), in shared memory, each warp's sums of its rows
  // at vfcol<k>[warp][it][lane] (a warp's registers do not hold a row and its columns' sums:
  // nanoGPT's norm backward spilled 404 bytes). declare_columns before the chunk, flush_columns
  // (flush_warp_columns) after it.
  bool column_registers = false;
  int column_warps = 0;

  void declare_columns(std::string& out, const std::string& indent) const {
    for (size_t k = 0; k < nest_.stores.size(); ++k) {
      if (!nest_.stores[k].column) continue;
      const std::string c = compute_type(nest_.stores[k].dtype), PT = std::to_string(per_thread_);
      out += indent + (column_warps > 0 ? "__shared__ " + c + " vfcol" + std::to_string(k) + "[" +
                                              std::to_string(column_warps) + "][" + PT + "][32];\n"
                                        : c + " cacc" + std::to_string(k) + "[" + PT + "];\n");
    }
  }

  // Column store k's sum at (warp, it, lane): a register of this thread, or a slot of warp rows'
  // shared memory.
  std::string column_at(size_t k, const std::string& warp, const std::string& it, const std::string& lane) const {
    const std::string K = std::to_string(k);
    return column_warps > 0 ? "vfcol" + K + "[" + warp + "][" + it + "][" + lane + "]" : "cacc" + K + "[" + it + "]";
  }

  // Warp rows: after a barrier, the block's threads add the chunk's column sums over the warps that
  // took rows (`rows_taken`, an expression) and store them, thread t the entries t, t + block, ...
  // of [per_thread][32]; a second barrier frees the sums for the next chunk.
  void flush_warp_columns(const std::string& rows_taken, std::string& out, const std::string& indent) const {
    const std::string PT = std::to_string(per_thread_), V = std::to_string(v_), i2 = indent + "  ";
    out += indent + "__syncthreads();\n";
    out += indent + "for (int e = threadIdx.x; e < " + PT + " * 32; e += " + std::to_string(32 * column_warps) + ") {\n";
    out += i2 + "const int it = e / 32, l = e % 32;\n";
    out += i2 + "const vf_index kg = (vf_index)(((it / " + V + ") * 32 + l) * " + V + " + it % " + V + ");\n";
    out += i2 + "if (kg >= inner) continue;\n";
    unravel_inner("kg", i2, out);
    store_columns(
        [&](size_t k, const StoreStmt& s) {
          ReduceStmt r;
          r.op = s.op;
          r.acc_dtype = s.dtype;
          const std::string sum = "sum" + std::to_string(k);
          out += i2 + compute_type(s.dtype) + " " + sum + " = " + column_at(k, "0", "it", "l") + ";\n";
          out += i2 + "for (int w = 1; w < " + rows_taken + "; ++w) " + sum + " = " +
                 reduce_combine(r, sum, column_at(k, "w", "it", "l")) + ";\n";
          return sum;
        },
        i2, out);
    out += indent + "}\n";
    out += indent + "__syncthreads();\n";
  }

  // Stores each column store's registers at its columns, those inside the row.
  void flush_columns(std::string& out, const std::string& indent) const {
    const std::string T = std::to_string(team_), V = std::to_string(v_), i2 = indent + "  ", i4 = indent + "    ";
    out += indent + "if (inner > 0) {\n";
    out += "#pragma unroll\n";
    out += indent + "for (int g = 0; g < " + std::to_string(groups()) + "; ++g) {\n";
    out += i2 + "const vf_index kg = (vf_index)((g * " + T + " + lane) * " + V + ");\n";
    out += i2 + "if (kg >= inner) continue;\n";
    out += "#pragma unroll\n";
    out += i2 + "for (int j = 0; j < " + V + "; ++j) {\n";
    out += i4 + "const int it = g * " + V + " + j;\n";
    unravel_inner("kg + j", i4, out);
    store_columns([&](size_t k, const StoreStmt&) { return "cacc" + std::to_string(k) + "[it]"; }, i4, out);
    out += i2 + "}\n";
    out += indent + "}\n";
    out += indent + "}\n";
  }

 private:
  int groups() const { return per_thread_ / v_; }

  // At a column whose inner vars are defined: each column store's element set to value(k, store),
  // an expression (value may first write the lines that define it).
  void store_columns(const std::function<std::string(size_t, const StoreStmt&)>& value, const std::string& indent,
                     std::string& out) const {
    std::vector<int> roots;
    for (const StoreStmt& s : nest_.stores)
      if (s.column) roots.push_back(s.index);
    emit_index_defs(nest_, roots, vars_, "vf_index", indent, out);
    for (size_t k = 0; k < nest_.stores.size(); ++k) {
      const StoreStmt& s = nest_.stores[k];
      if (!s.column) continue;
      const std::string v = value(k, s), mem = memory_type(s.dtype);
      out += indent + "((" + mem + "*)" + field_name(s.param) + ")[" + index_ref(nest_, s.index, vars_) + "] = " +
             (is_half(s.dtype) ? store_value(s.dtype, v) : "(" + mem + ")" + v) + ";\n";
    }
  }

  void unravel_inner(const std::string& from, const std::string& indent, std::string& out) const {
    const size_t rank = nest_.extents.size(), inner = nest_.inner_extents.size();
    if (inner == 0) return;
    out += indent + "vf_index krest = " + from + ";\n";
    emit_position_unravel(vars_, rank, rank + inner, p_ + "s", "krest", "const vf_index ", indent, out);
  }

  // The row's scalar loads (they do not read the reduced vars) that no reduction's result feeds
  // and some loop over the row needs.
  std::vector<int> row_scalar_loads() const {
    std::vector<char> inner;
    std::vector<int> ready, loads;
    nest_.scope_of_values(inner, ready);
    for (size_t id = 0; id < nest_.values.size(); ++id) {
      if (nest_.values[id].op != ValueOp::Load || inner[id] || ready[id] != 0) continue;
      if (std::any_of(needs_.begin(), needs_.end(), [&](const std::vector<char>& need) { return need[id] != 0; }))
        loads.push_back(static_cast<int>(id));
    }
    return loads;
  }

  // The rows of the ring (async_prefetch) that prefetch_packs_ and prefetch_values_ take, 4 or 3
  // where they fit kAsyncRingBytes with `block` threads; 0 without a ring.
  void choose_stages(int block) {
    int64_t row_bytes = 16 * groups() * static_cast<int64_t>(prefetch_packs_.size());
    bool copyable = async_allowed_ && !prefetch_packs_.empty();
    for (int id : prefetch_values_) {
      const int64_t size = dtype_size(nest_.values[id].dtype);
      copyable = copyable && (size == 4 || size == 8);
      row_bytes += size;
    }
    stages_ = 0;
    for (int stages = 4; copyable && stages >= 3 && stages_ == 0; --stages)
      if (stages * row_bytes * block <= kAsyncRingBytes) stages_ = stages;
  }

  // The reads start_prefetch chose, of the chunk's row `row` (an expression), into pf<id>[g] and
  // pfv<id>, or, with a ring, copies into its stage `stage`: the serial var is shadowed by the row's.
  void emit_prefetch(const std::string& row, std::string& out, const std::string& indent, const std::string& stage = "") {
    const std::string i2 = indent + "  ", i4 = indent + "    ", T = std::to_string(team_), V = std::to_string(v_);
    out += indent + "const vf_index prefetch_row = " + row + ";\n";
    out += indent + "{\n";
    out += i2 + "const vf_index " + serial_var_ + " = prefetch_row;\n";
    std::vector<int> roots;
    for (int id : prefetch_values_) roots.push_back(nest_.values[id].index);
    emit_index_defs(nest_, roots, vars_, "vf_index", i2, out);
    for (int id : prefetch_values_) {
      const ValueExpr& e = nest_.values[id];
      const std::string index = index_ref(nest_, e.index, vars_);
      if (stages_ > 0)
        out += i2 + "vf_cp_async(&vfs" + std::to_string(id) + "[" + stage + "][threadIdx.x], (const " +
               memory_type(e.dtype) + "*)" + field_name(e.param) + " + " + index + ");\n";
      else
        out += i2 + "pfv" + std::to_string(id) + " = " + load_expr(e.dtype, field_name(e.param), index) + ";\n";
    }
    if (!prefetch_packs_.empty()) {
      out += "#pragma unroll\n";
      out += i2 + "for (int g = 0; g < " + std::to_string(groups()) + "; ++g) {\n";
      out += i4 + "const vf_index kg = (vf_index)((g * " + T + " + lane) * " + V + ");\n";
      out += i4 + "const vf_index kb = kg < inner ? kg : 0;\n";
      unravel_inner("kb", i4, out);
      roots.clear();
      for (int id : prefetch_packs_) roots.push_back(nest_.values[id].index);
      emit_index_defs(nest_, roots, vars_, "vf_index", i4, out);
      for (int id : prefetch_packs_) {
        const ValueExpr& e = nest_.values[id];
        const std::string index = index_ref(nest_, e.index, vars_);
        if (stages_ > 0)
          out += i4 + "vf_cp_async(&vfr" + std::to_string(id) + "[" + stage + "][g][threadIdx.x], (const " +
                 pack_type(e.dtype, v_) + "*)((const " + memory_type(e.dtype) + "*)" + field_name(e.param) + " + " +
                 index + "));\n";
        else
          out += i4 + "pf" + std::to_string(id) + "[g] = " + pack_at(e.dtype, v_, field_name(e.param), index, true) + ";\n";
      }
      out += i2 + "}\n";
    }
    out += indent + "}\n";
  }

  // Loop number loop_ over the row (the phases', then the stores') around body.
  void loop(const std::function<void(const std::string&)>& body, const std::string& indent, std::string& out) {
    const int l = loop_++;
    const std::string T = std::to_string(team_), V = std::to_string(v_), i2 = indent + "  ", i4 = indent + "    ";
    if (per_thread_ == 0) {
      // A sliced nest's thread takes about 16 elements of its row: 8 loads of each input in flight.
      out += sliced ? "#pragma unroll 8\n" : "#pragma unroll 4\n";
      out += indent + "for (vf_i64 k = lane; k < inner; k += " + T + ") {\n";
      unravel_inner("(vf_index)k", i2, out);
      const auto saved = em_.save();
      body(i2);
      em_.restore(saved);
      out += indent + "}\n";
      return;
    }
    out += indent + "if (inner > 0) {\n";
    out += "#pragma unroll\n";
    out += indent + "for (int g = 0; g < " + std::to_string(groups()) + "; ++g) {\n";
    out += i2 + "const vf_index kg = (vf_index)((g * " + T + " + lane) * " + V + ");\n";
    out += i2 + "const bool in = kg < inner;\n";
    out += i2 + "const vf_index kb = in ? kg : 0;\n";
    std::vector<int> load_now, local, stores_now, roots;
    for (size_t id = 0; id < nest_.values.size(); ++id) {
      const bool wanted = needs_[l][id] || (l == 0 && preloaded_[id]);
      if (!packed_[id] || !wanted || override_.count(static_cast<int>(id))) continue;
      load_now.push_back(static_cast<int>(id));
      roots.push_back(nest_.values[id].index);
      const std::string name = "pk" + std::to_string(id);
      if (!cached_[id]) {
        local.push_back(static_cast<int>(id));
        out += i2 + pack_type(nest_.values[id].dtype, v_) + " " + name + ";\n";
      }
      override_[static_cast<int>(id)] = from_memory(nest_.values[id].dtype, name + (cached_[id] ? "[g]" : "") + ".e[j]");
    }
    for (size_t k = 0; l == nest_.phase_count() && k < nest_.stores.size(); ++k) {
      if (!packed_store_[k]) continue;
      stores_now.push_back(static_cast<int>(k));
      roots.push_back(nest_.stores[k].index);
      out += i2 + pack_type(nest_.stores[k].dtype, v_) + " ps" + std::to_string(k) + ";\n";
      out += i2 + "vf_index ks" + std::to_string(k) + ";\n";
    }
    if (!roots.empty()) {
      out += i2 + "{\n";
      unravel_inner("kb", i4, out);
      emit_index_defs(nest_, roots, vars_, "vf_index", i4, out);
      for (int id : load_now) {
        const ValueExpr& e = nest_.values[id];
        const std::string pk = "pk" + std::to_string(id) + (cached_[id] ? "[g]" : "");
        const std::string read = pack_at(e.dtype, v_, field_name(e.param), index_ref(nest_, e.index, vars_), true);
        if (e.pred < 0) {
          out += i4 + pk + " = " + read + ";\n";
          continue;
        }
        // A where's operand (pred_in_bounds): the pack is read when its guard holds for any element.
        const std::string need = "need" + std::to_string(id), i6 = i4 + "  ";
        out += i4 + "bool " + need + " = false;\n";
        out += "#pragma unroll\n";
        out += i4 + "for (int jj = 0; jj < " + V + "; ++jj) {\n";
        unravel_inner("kb + jj", i6, out);
        emit_index_defs(nest_, {e.pred}, vars_, "vf_index", i6, out);
        out += i6 + need + " = " + need + " || (" + index_ref(nest_, e.pred, vars_) + ");\n";
        out += i4 + "}\n";
        out += i4 + pk + " = " + need + " ? " + read + " : " + pack_type(e.dtype, v_) + "{};\n";
      }
      for (int k : stores_now) out += i4 + "ks" + std::to_string(k) + " = " + index_ref(nest_, nest_.stores[k].index, vars_) + ";\n";
      out += i2 + "}\n";
    }
    // A phase's reductions combine the group's elements first, then fold the group in when it is
    // inside the row.
    for (size_t k = 0; k < nest_.reductions.size(); ++k)
      if (nest_.reductions[k].phase == l)
        out += i2 + compute_type(nest_.reductions[k].acc_dtype) + " gacc" + std::to_string(k) + " = " +
               group_identity(nest_.reductions[k]) + ";\n";
    std::vector<int> read_now;
    auto element_loop = [&](const std::string& at, bool fast_division) {
      const std::string in2 = at + "  ";
      em_.exact_flag = fast_division ? "exact" : "";
      out += "#pragma unroll\n";
      out += at + "for (int j = 0; j < " + V + "; ++j) {\n";
      out += in2 + "const int it = g * " + V + " + j;\n";
      out += in2 + "(void)it;\n";
      unravel_inner("kb + j", in2, out);
      const auto saved = em_.save();
      body(in2);
      read_now.clear();
      for (size_t id = 0; id < nest_.values.size(); ++id) {
        if (!cached_[id] || packed_[id] || !em_.is_defined(static_cast<int>(id)) || override_.count(static_cast<int>(id)))
          continue;
        out += in2 + "cache" + std::to_string(id) + "[it] = v" + std::to_string(id) + ";\n";
        read_now.push_back(static_cast<int>(id));
      }
      em_.restore(saved);
      em_.exact_flag.clear();
      out += at + "}\n";
    };
    const size_t loop_start = out.size();
    const int fast_divisions = em_.fast_divisions;
    element_loop(i2, true);
    if (em_.fast_divisions > fast_divisions) {
      // Divisions by a row's value (softmax's) take vf_div_r_fast; where one of the group's operands
      // is outside its exact range, the group is computed again with vf_div_r (the group's
      // accumulators start over; its cached values and packed stores are overwritten).
      out.insert(loop_start, i2 + "bool exact = true;\n");
      out += i2 + "if (!exact) {\n";
      for (size_t k = 0; k < nest_.reductions.size(); ++k)
        if (nest_.reductions[k].phase == l)
          out += i4 + "gacc" + std::to_string(k) + " = " + group_identity(nest_.reductions[k]) + ";\n";
      element_loop(i4, false);
      out += i2 + "}\n";
    }
    for (int id : read_now) override_[id] = "cache" + std::to_string(id) + "[it]";
    for (int id : local) override_.erase(id);
    for (size_t k = 0; k < nest_.reductions.size(); ++k) {
      if (nest_.reductions[k].phase != l) continue;
      const std::string acc = "acc" + std::to_string(k);
      out += i2 + acc + " = in ? " + reduce_combine(nest_.reductions[k], acc, "gacc" + std::to_string(k)) + " : " + acc + ";\n";
    }
    for (int k : stores_now) {
      const StoreStmt& s = nest_.stores[k];
      out += i2 + "if (in) " + pack_at(s.dtype, v_, field_name(s.param), "ks" + std::to_string(k), false) + " = ps" +
             std::to_string(k) + ";\n";
    }
    out += indent + "}\n";
    out += indent + "}\n";
  }

  const LoopNest& nest_;
  ScopedEmitter& em_;
  const std::vector<std::string>& vars_;
  std::string p_;
  int team_, per_thread_;
  std::vector<std::vector<char>> needs_;  // per loop over the row: the values it needs
  std::vector<char> packed_, packed_store_, cached_, preloaded_;
  bool preload_row_values_;
  bool async_allowed_;
  std::string serial_var_, serial_extent_;               // set by start_prefetch
  std::string serial_step_ = "1";                        // the rows from a team's row to its next
  std::vector<int> prefetch_packs_, prefetch_values_;  // read one row ahead
  int stages_ = 0;                                     // > 0: the rows of the ring (async_prefetch)
  std::unordered_map<int, std::string> override_, store_override_;
  int loop_ = 0;
  int v_;
};

}  // namespace

void emit_cuda_reduction_nest(const LoopNest& nest, int n, const NestSchedule& schedule, const KernelAbi& kabi,
                              std::string& out) {
  const AbiNest& abi = kabi.nests[n];
  const size_t rank = nest.extents.size(), inner = nest.inner_extents.size();
  const size_t chunk_rank = nest.serial ? rank - 1 : rank;  // the dims the teams' rows cover
  const int team = abi.team;
  const std::string p = "n" + std::to_string(n) + "_", T = std::to_string(team);
  std::vector<std::string> vars;
  out += "  {\n";
  std::string rows = "(vf_i64)1", count = "(vf_i64)1";
  for (size_t d = 0; d < rank + inner; ++d) {
    const int field = d < rank ? nest.extents[d] : nest.inner_extents[d - rank];
    const std::string size = p + "s" + std::to_string(d);
    out += "    const vf_index " + size + " = a.f" + std::to_string(field) + ";\n";
    if (d < chunk_rank) rows += " * " + size;
    if (d >= rank) count += " * " + size;
    vars.push_back(p + "i" + std::to_string(d));
  }
  // The row length in the index type: the loops compare it with their 32-bit positions.
  out += "    const vf_i64 rows = " + rows + ";\n";
  out += "    const vf_index inner = (vf_index)(" + count + ");\n";
  const bool sliced = schedule.reduction.slices > 0;
  const int warps = schedule.reduction.warps;  // > 0: warp rows, a block per chunk
  VF_INTERNAL_CHECK(warps == 0 || (nest.serial && team == 32), "warp rows in a nest of team ", team,
                    nest.serial ? "" : ", not serial");
  if (sliced) {  // a tile of 32 neighbouring rows per pass, a warp per slice of their elements
    out += "    const int lane = threadIdx.x / 32;\n";
  } else {
    out += "    const int lane = threadIdx.x % " + T + ";\n";
    out += "    const vf_i64 teams = (vf_i64)gridDim.x * (blockDim.x / " + T + ");\n";
  }
  out += "    (void)inner;\n";
  out += "    int parity = 0;\n";
  // With 32-bit index math the row's multi-index comes from host dividers (a block reduces one
  // grain of rows, so per-thread divisions would cost about twenty instructions each per row).
  std::vector<std::string> row_sizes, row_vars(vars.begin(), vars.begin() + static_cast<int64_t>(chunk_rank));
  for (size_t d = 0; d < chunk_rank; ++d) row_sizes.push_back(p + "s" + std::to_string(d));
  if (kabi.index32) emit_dividers(schedule.dividers, p, "    ", out);
  // A serial nest's team walks its chunk's rows in order (the serial loop): parity flips per row.
  if (sliced) {
    // The block's passes are uniform (its barriers); a lane past the last row takes the last row
    // again and stores nothing.
    out += "    for (vf_i64 tile = blockIdx.x; tile * 32 < rows; tile += gridDim.x, parity ^= 1) {\n";
    out += "      const vf_i64 row_at = tile * 32 + threadIdx.x % 32;\n";
    out += "      const bool row_in = row_at < rows;\n";
    out += "      const vf_i64 row = row_in ? row_at : rows - 1;\n";
  } else if (warps > 0) {
    out += "    (void)teams;\n";
    out += "    const int warp = threadIdx.x / 32;\n";
    out += "    for (vf_i64 row = blockIdx.x; row < rows; row += gridDim.x) {\n";
  } else {
    out += "    for (vf_i64 row = (vf_i64)blockIdx.x * (blockDim.x / " + T + ") + threadIdx.x / " + T +
           "; row < rows; row += teams" + (nest.serial ? "" : ", parity ^= 1") + ") {\n";
  }
  if (kabi.index32) {
    for (const std::string& v : row_vars) out += "      vf_index " + v + ";\n";
    emit_unravel("(vf_index)row", row_sizes, row_vars, "", true, p, "      ", out);
  } else {
    out += "      vf_index rest = (vf_index)row;\n";
    emit_position_unravel(vars, 0, chunk_rank, p + "s", "rest", "const vf_index ", "      ", out);
    out += "      (void)rest;\n";
  }
  ScopedEmitter em(nest, vars, "vf_index");
  RowSchedule rs(nest, em, vars, p, team, schedule.reduction);
  RowSchedule strided(nest, em, vars, p, team, ReductionSchedule{});
  rs.sliced = strided.sliced = sliced;
  const std::string serial_var = nest.serial ? vars[rank - 1] : "";
  const std::string serial_extent = nest.serial ? p + "s" + std::to_string(rank - 1) : "";
  if (nest.serial) rs.column_first = strided.column_first = serial_var + " == 0";
  // The alignment of every packed address of the row, into `flag`: the row's first element (v
  // divides the row) and, for an address that divides the reduced var by c (a split by a
  // reshape), element c too. With `serial`, of the chunk's row at that serial index.
  auto alignment_test = [&](const std::string& flag, const std::string& serial, const std::string& indent) {
    const int64_t var = static_cast<int64_t>(rank + inner) - 1;
    for (const auto& [dtype, param, index] : rs.packed_addresses()) {
      std::vector<std::string> at{"0"};
      for (int field : var_divisors(nest, index, var)) at.push_back(field_name(field));
      for (const std::string& k : at) {
        out += indent + "{\n";
        if (!serial.empty()) out += indent + "  const vf_index " + serial_var + " = " + serial + ";\n";
        out += indent + "  vf_index krest = " + k + ";\n";
        emit_position_unravel(vars, rank, rank + inner, p + "s", "krest", "const vf_index ", indent + "  ", out);
        emit_index_defs(nest, {index}, vars, "vf_index", indent + "  ", out);
        out += indent + "  " + flag + " = " + flag + " && vf_aligned((const " + std::string(memory_type(dtype)) + "*)a.f" +
               std::to_string(param) + " + " + index_ref(nest, index, vars) + ", " +
               std::to_string(rs.vec() * dtype_size(dtype)) + ");\n";
        out += indent + "}\n";
      }
    }
  };
  // The serial loop over the chunk's rows (none in a plain nest) around body(indent). Without row
  // reductions (a bias's gradient alone: column sums of rows that nothing else reads) a row's
  // loads wait for no barrier, so the loop is unrolled, by up to four rows whose loads take at
  // most 32 registers together, and ptxas issues those rows' loads at once: one row ahead, a team
  // of 128 threads keeps 4 KB in flight where a multiprocessor needs about 32 KB to stream
  // (nanoGPT's bias gradients ran at 30 to 40% of the ceiling). Beyond 32, ptxas spills the
  // 2,304-column bias gradient's generic kernel (400 bytes at four rows).
  const int unroll_rows = nest.reductions.empty()
                              ? std::clamp(32 / std::max(1, schedule.reduction.load_registers), 1, 4) : 1;
  // With warp rows, `split` says whether the block's warps share the chunk's rows (rows warp,
  // warp + warps, ...), else warp 0 takes them all (the loops whose columns are stored row by row).
  auto rows_of_chunk = [&](const std::string& indent, const std::function<void(const std::string&)>& body,
                           bool split = false) {
    if (!nest.serial) {
      body(indent);
      return;
    }
    std::string in = indent;
    if (warps > 0 && !split) {
      out += indent + "if (warp == 0) {\n";
      in += "  ";
    }
    const bool shared = warps > 0 && split;
    const std::string first = shared ? "warp" : "0", step = std::to_string(warps);
    if (unroll_rows > 1) out += "#pragma unroll " + std::to_string(unroll_rows) + "\n";
    out += in + "for (vf_index " + serial_var + " = " + first + "; " + serial_var + " < " + serial_extent + "; " +
           (shared ? serial_var + " += " + step : "++" + serial_var) + ", parity ^= 1) {\n";
    body(in + "  ");
    out += in + "}\n";
    if (warps > 0 && !split) out += indent + "}\n";
  };
  auto emit_row = [&](RowSchedule& schedule, const std::string& indent) {
    const auto saved = em.save();
    schedule.emit(out, indent);
    em.restore(saved);
  };
  // A serial nest's chunk takes one loop for all its rows: the packed one when its packed
  // addresses step by whole packs from row to row (affine in the serial var) and its first two
  // rows are aligned, its column stores then kept in registers until the chunk's end; else the
  // strided one. (Their lanes own other columns, so a chunk must not mix them.)
  const std::vector<std::tuple<DType, int, int>> packed = rs.packed_addresses();
  const bool per_chunk = nest.serial && !packed.empty() && std::all_of(packed.begin(), packed.end(), [&](const auto& a) {
                           return affine_in_var(nest, std::get<2>(a), static_cast<int64_t>(rank) - 1);
                         });
  if (packed.empty()) {
    rows_of_chunk("      ", [&](const std::string& in) { emit_row(rs, in); });
  } else if (per_chunk) {
    out += "      bool chunk_aligned = true;\n";
    alignment_test("chunk_aligned", "0", "      ");
    out += "      if (" + p + "s" + std::to_string(rank - 1) + " > 1) {\n";
    alignment_test("chunk_aligned", "1", "        ");
    out += "      }\n";
    out += "      if (chunk_aligned) {\n";
    rs.column_registers = true;
    rs.column_warps = warps;
    if (warps > 0) rs.column_first = serial_var + " == warp";
    rs.declare_columns(out, "        ");
    if (schedule.reduction.prefetch || schedule.reduction.async_prefetch)
      rs.start_prefetch(serial_var, serial_extent, kabi.block_size, schedule.reduction.prefetch, warps,
                        warps > 0 ? "warp" : "0", out, "        ");
    rows_of_chunk("        ", [&](const std::string& in) { emit_row(rs, in); }, true);
    if (warps > 0)
      rs.flush_warp_columns("(int)min((vf_index)" + std::to_string(warps) + ", " + serial_extent + ")", out, "        ");
    else
      rs.flush_columns(out, "        ");
    out += "      } else {\n";
    rows_of_chunk("        ", [&](const std::string& in) { emit_row(strided, in); });
    out += "      }\n";
  } else {
    rows_of_chunk("      ", [&](const std::string& in) {
      out += in + "bool row_aligned = true;\n";
      alignment_test("row_aligned", "", in);
      out += in + "if (row_aligned) {\n";
      emit_row(rs, in + "  ");
      out += in + "} else {\n";
      emit_row(strided, in + "  ");
      out += in + "}\n";
      // A column store's element belongs to the lane that takes its column, which differs between
      // the two loops: the team's lanes meet before the next row.
      if (nest.serial && team > 32) out += in + "__syncthreads();\n";
      if (nest.serial && team == 32) out += in + "__syncwarp();\n";
    });
  }
  out += "    }\n  }\n";
}

}  // namespace vf
