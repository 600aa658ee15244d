// The CUDA schedule of a reduction nest (kernel_ir.h): a team of threads (a warp, or the whole
// block for long rows, or one thread when many rows reduce outer dims) takes a row at a time, in a
// grid-stride loop over rows. Each thread
// accumulates a strided share of the reduced elements; the team combines the partial results with
// warp shuffles (and shared memory across the block's warps), so that every thread of the team
// holds the row's result, and the next phase or the stores use it. Row stores are made by the
// team's first thread.
//
// When a thread's share is at most `per_thread` elements, its loops over the row are unrolled
// completely and the loads that several of them need are read from memory once and kept in
// registers (cache<id>[it]): the row is read once however many phases the nest has, and every
// load of the first loop is in flight at once.
#include <unordered_map>

#include "codegen/emit_source.h"

namespace vf {
namespace {

// Combines acc over the team; every thread ends with the team's result.
void emit_team_reduce(const ReduceStmt& r, int k, int team, const std::string& indent, std::string& out) {
  if (team == 1) return;
  const std::string acc = "acc" + std::to_string(k);
  out += indent + "for (int o = 16; o > 0; o >>= 1) " + acc + " = " +
         reduce_combine(r, acc, "vf_shfl_xor(" + acc + ", o)") + ";\n";
  if (team == 32) return;
  const std::string smem = "red" + std::to_string(k);
  out += indent + "{\n";
  out += indent + "  __shared__ " + compute_type(r.acc_dtype) + " " + smem + "[32];\n";
  out += indent + "  if (threadIdx.x % 32 == 0) " + smem + "[threadIdx.x / 32] = " + acc + ";\n";
  out += indent + "  __syncthreads();\n";
  out += indent + "  " + acc + " = " + smem + "[0];\n";
  out += indent + "  for (int w = 1; w < (int)(blockDim.x / 32); ++w) " + acc + " = " +
         reduce_combine(r, acc, smem + "[w]") + ";\n";
  out += indent + "  __syncthreads();\n";
  out += indent + "}\n";
}

}  // namespace

void emit_cuda_reduction_nest(const LoopNest& nest, int n, int team, int per_thread, std::string& out) {
  const size_t rank = nest.extents.size(), inner = nest.inner_extents.size();
  const std::string p = "n" + std::to_string(n) + "_", T = std::to_string(team);
  std::vector<std::string> vars;
  out += "  {\n";
  std::string rows = "(vf_i64)1", count = "(vf_i64)1";
  for (size_t d = 0; d < rank + inner; ++d) {
    const int field = d < rank ? nest.extents[d] : nest.inner_extents[d - rank];
    const std::string size = p + "s" + std::to_string(d);
    out += "    const vf_index " + size + " = a.f" + std::to_string(field) + ";\n";
    (d < rank ? rows : count) += " * " + size;
    vars.push_back(p + "i" + std::to_string(d));
  }
  out += "    const vf_i64 rows = " + rows + ", inner = " + count + ";\n";
  out += "    const int lane = threadIdx.x % " + T + ";\n";
  out += "    const vf_i64 teams = (vf_i64)gridDim.x * (blockDim.x / " + T + ");\n";
  out += "    (void)inner;\n";
  out += "    for (vf_i64 row = (vf_i64)blockIdx.x * (blockDim.x / " + T + ") + threadIdx.x / " + T +
         "; row < rows; row += teams) {\n";
  out += "      vf_index rest = (vf_index)row;\n";
  emit_position_unravel(vars, 0, rank, p + "s", "rest", "const vf_index ", "      ", out);
  out += "      (void)rest;\n";
  ScopedEmitter em(nest, vars, "vf_index");
  // Loads that more than one loop over the row needs are cached in registers.
  std::vector<std::vector<int>> loop_roots;
  for (int phase = 0; phase < em.phases(); ++phase) loop_roots.push_back(em.phase_operands(phase));
  loop_roots.emplace_back();
  for (const StoreStmt& s : nest.stores)
    if (!s.row) loop_roots.back().push_back(s.value);
  std::vector<int> uses(nest.values.size(), 0);
  for (const auto& roots : loop_roots) {
    const std::vector<char> need = em.needed_values(roots);
    for (size_t id = 0; id < need.size(); ++id) uses[id] += need[id];
  }
  std::vector<int> cached;
  std::unordered_map<int, std::string> from_cache;  // the cached loads already read
  if (per_thread > 0) {
    for (size_t id = 0; id < nest.values.size(); ++id) {
      const ValueExpr& e = nest.values[id];
      if (e.op != ValueOp::Load || uses[id] < 2 || !em.is_inner(static_cast<int>(id))) continue;
      cached.push_back(static_cast<int>(id));
      out += std::string("      ") + compute_type(e.dtype) + " cache" + std::to_string(id) + "[" +
             std::to_string(per_thread) + "];\n";
    }
  }
  // The team's strided loop over the reduced elements, around `body`.
  auto inner_loop = [&](const std::function<void(const std::string&)>& body) {
    if (per_thread > 0) out += "      if (inner > 0)\n";
    if (per_thread > 0) {
      // Branch-free iterations: one past the row reads element 0 again and is not combined or
      // stored (`in`), so that the compiler can issue every load of the unrolled loop at once.
      out += "#pragma unroll\n";
      out += "      for (int it = 0; it < " + std::to_string(per_thread) + "; ++it) {\n";
      out += "        const bool in = lane + it * " + T + " < inner;\n";
      out += "        const vf_index k = in ? (vf_index)(lane + it * " + T + ") : 0;\n";
    } else {
      out += "#pragma unroll 4\n";
      out += "      for (vf_i64 k = lane; k < inner; k += " + T + ") {\n";
    }
    if (inner > 0) {
      out += "        vf_index krest = (vf_index)k;\n";
      emit_position_unravel(vars, rank, rank + inner, p + "s", "krest", "const vf_index ", "        ", out);
    }
    const auto saved = em.save();
    body("        ");
    std::vector<int> read_now;
    for (int id : cached) {
      if (!em.is_defined(id) || from_cache.count(id)) continue;
      out += "        cache" + std::to_string(id) + "[it] = v" + std::to_string(id) + ";\n";
      read_now.push_back(id);
    }
    em.restore(saved);
    for (int id : read_now) from_cache[id] = "cache" + std::to_string(id) + "[it]";
    out += "      }\n";
  };
  ReductionRowHooks hooks;
  hooks.inner_loop = inner_loop;
  hooks.after_phase = [&](int phase) {
    for (size_t k = 0; k < nest.reductions.size(); ++k)
      if (nest.reductions[k].phase == phase) emit_team_reduce(nest.reductions[k], static_cast<int>(k), team, "      ", out);
  };
  hooks.row_guard = "if (lane == 0)";
  if (per_thread > 0) hooks.element_guard = "in";
  hooks.load_override = &from_cache;
  emit_reduction_row(nest, em, hooks, "      ", out);
  out += "    }\n  }\n";
}

}  // namespace vf
