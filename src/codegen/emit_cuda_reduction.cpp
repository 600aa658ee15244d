// The CUDA schedule of a reduction nest (kernel_ir.h): a team of threads (a warp, or the whole
// block for long rows) takes a row at a time, in a grid-stride loop over rows. Each thread
// accumulates a strided share of the reduced elements; the team combines the partial results with
// warp shuffles (and shared memory across the block's warps), so that every thread of the team
// holds the row's result, and the next phase or the stores use it. Row stores are made by the
// team's first thread.
#include "codegen/emit_source.h"

namespace vf {
namespace {

// Combines acc over the team; every thread ends with the team's result.
void emit_team_reduce(const ReduceStmt& r, int k, int team, const std::string& indent, std::string& out) {
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

void emit_cuda_reduction_nest(const LoopNest& nest, int n, int team, std::string& out) {
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
  for (size_t d = rank; d-- > 0;) {
    const std::string ds = std::to_string(d);
    out += "      const vf_index " + vars[d] + " = rest % " + p + "s" + ds + ";\n      rest /= " + p + "s" + ds + ";\n";
  }
  out += "      (void)rest;\n";
  ScopedEmitter em(nest, vars, "vf_index");
  // The team's strided loop over the reduced elements, around `body`.
  auto inner_loop = [&](const std::function<void(const std::string&)>& body) {
    out += "#pragma unroll 4\n";
    out += "      for (vf_i64 k = lane; k < inner; k += " + T + ") {\n";
    if (inner > 0) {
      out += "        vf_index krest = (vf_index)k;\n";
      for (size_t d = rank + inner; d-- > rank;) {
        const std::string ds = std::to_string(d);
        if (d > rank)
          out += "        const vf_index " + vars[d] + " = krest % " + p + "s" + ds + ";\n        krest /= " + p + "s" + ds + ";\n";
        else
          out += "        const vf_index " + vars[d] + " = krest;\n";
      }
    }
    const auto saved = em.save();
    body("        ");
    em.restore(saved);
    out += "      }\n";
  };
  for (int phase = 0; phase < em.phases(); ++phase) {
    const std::vector<int> operands = em.phase_operands(phase);
    em.define(operands, {}, true, "      ", out);
    for (size_t k = 0; k < nest.reductions.size(); ++k) {
      const ReduceStmt& r = nest.reductions[k];
      if (r.phase == phase)
        out += std::string("      ") + compute_type(r.acc_dtype) + " acc" + std::to_string(k) + " = " + reduce_identity(r) + ";\n";
    }
    inner_loop([&](const std::string& indent) {
      em.define(operands, {}, false, indent, out);
      for (size_t k = 0; k < nest.reductions.size(); ++k) {
        const ReduceStmt& r = nest.reductions[k];
        if (r.phase != phase) continue;
        const std::string acc = "acc" + std::to_string(k);
        out += indent + acc + " = " + reduce_combine(r, acc, "v" + std::to_string(r.value)) + ";\n";
      }
    });
    for (size_t k = 0; k < nest.reductions.size(); ++k)
      if (nest.reductions[k].phase == phase) emit_team_reduce(nest.reductions[k], static_cast<int>(k), team, "      ", out);
  }
  for (const bool row : {false, true}) {
    std::vector<int> values, indices;
    for (const StoreStmt& s : nest.stores) {
      if (s.row != row) continue;
      values.push_back(s.value);
      indices.push_back(s.index);
    }
    if (values.empty()) continue;
    em.define(values, indices, true, "      ", out);
    auto stores = [&](const std::string& indent) {
      em.define(values, indices, false, indent, out);
      for (const StoreStmt& s : nest.stores)
        if (s.row == row) out += indent + em.store(s);
    };
    if (row) {
      out += "      if (lane == 0) {\n";
      stores("        ");
      out += "      }\n";
    } else {
      inner_loop(stores);
    }
  }
  out += "    }\n  }\n";
}

}  // namespace vf
