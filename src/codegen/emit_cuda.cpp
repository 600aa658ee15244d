// The CUDA emitter: kernel IR to a CUDA C++ translation unit for NVRTC (no includes).
//
// Each loop nest is a grid-stride loop over its flattened points. In a flat nest (every buffer
// contiguous in the loop order) the point's position is the element index in every buffer;
// otherwise its multi-index is unravelled with / and % in the index type (32-bit when the layout
// class allows it).
#include <algorithm>

#include "codegen/emit_source.h"

namespace vf {
namespace {

const char kPreludeCuda[] =
#include "codegen/prelude_cuda.inc"
    ;
const char kPreludeCommon[] =
#include "codegen/prelude_common.inc"
    ;

std::string field(int k) { return "a.f" + std::to_string(k); }

// The vector part of a flat nest: when every buffer's first element is aligned to its pack size,
// each thread moves packs of V elements (16 bytes of the widest dtype) with single loads and
// stores; the remaining elements (and every element, when unaligned) take the scalar loop after.
void emit_vector_part(const LoopNest& nest, std::string& out) {
  int64_t widest = 1;
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load) widest = std::max(widest, dtype_size(e.dtype));
  for (const StoreStmt& s : nest.stores) widest = std::max(widest, dtype_size(s.dtype));
  const std::string V = std::to_string(16 / widest);
  auto pack = [&](DType dtype) { return std::string("vf_pack<") + memory_type(dtype) + ", " + V + ">"; };
  auto base = [&](DType dtype, int data, int offset) {
    return std::string("((") + memory_type(dtype) + "*)" + field(data) + " + " + field(offset) + ")";
  };
  std::string aligned = "true";
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load)
      aligned += " && vf_aligned(" + base(e.dtype, e.param, e.flat_offset) + ", sizeof(" + pack(e.dtype) + "))";
  for (const StoreStmt& s : nest.stores)
    aligned += " && vf_aligned(" + base(s.dtype, s.param, s.flat_offset) + ", sizeof(" + pack(s.dtype) + "))";
  out += "    if (" + aligned + ") {\n";
  out += "      const vf_i64 packs = numel / " + V + ";\n";
  out += "      for (vf_i64 q = (vf_i64)blockIdx.x * blockDim.x + threadIdx.x; q < packs; q += (vf_i64)gridDim.x * blockDim.x) {\n";
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load) continue;
    out += "        const " + pack(e.dtype) + " p" + std::to_string(id) + " = ((const " + pack(e.dtype) + "*)" +
           base(e.dtype, e.param, e.flat_offset) + ")[q];\n";
  }
  for (size_t k = 0; k < nest.stores.size(); ++k)
    out += "        " + pack(nest.stores[k].dtype) + " s" + std::to_string(k) + ";\n";
  out += "#pragma unroll\n";
  out += "        for (int lane = 0; lane < " + V + "; ++lane) {\n";
  emit_nest_body(nest, {}, "vf_index", "          ", out, kVectorLane);
  out += "        }\n";
  for (size_t k = 0; k < nest.stores.size(); ++k) {
    const StoreStmt& s = nest.stores[k];
    out += "        ((" + pack(s.dtype) + "*)" + base(s.dtype, s.param, s.flat_offset) + ")[q] = s" + std::to_string(k) + ";\n";
  }
  out += "      }\n";
  out += "      start = packs * " + V + ";\n";
  out += "    }\n";
}

// The loop dim p < rank - 1 that unguarded loads walk with unit stride (the input's innermost dim
// is not the output's): such a nest is tiled. -1 when there is none.
int transposed_dim(const LoopNest& nest) {
  const int last = static_cast<int>(nest.extents.size()) - 1;
  if (nest.flat || last < 1) return -1;
  for (const ValueExpr& e : nest.values)
    if (e.op == ValueOp::Load && e.pred < 0 && e.unit_var >= 0 && e.unit_var != last) return e.unit_var;
  return -1;
}

// A tiled schedule for a transpose-like nest: each block takes 32 x 32 tiles of (dim p, innermost
// dim) for fixed other dims. The loads that walk dim p with unit stride are first read into shared
// memory with threads along p (coalesced), then the body runs with threads along the innermost
// dim (coalesced stores) and reads those loads from the tile.
void emit_tiled_nest(const LoopNest& nest, int n, int p, std::string& out) {
  const size_t rank = nest.extents.size();
  const std::string pre = "n" + std::to_string(n) + "_";
  auto size = [&](size_t d) { return pre + "s" + std::to_string(d); };
  std::vector<std::string> vars;
  out += "  {\n";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_index " + size(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    vars.push_back(pre + "i" + std::to_string(d));
  }
  const std::string sp = size(p), sl = size(rank - 1);
  out += "    const vf_i64 tiles_p = ((vf_i64)" + sp + " + 31) / 32, tiles_l = ((vf_i64)" + sl + " + 31) / 32;\n";
  std::string tiles = "tiles_p * tiles_l";
  for (size_t d = 0; d + 1 < rank; ++d)
    if (static_cast<int>(d) != p) tiles += " * " + size(d);
  out += "    const vf_i64 tiles = " + tiles + ";\n";
  std::vector<int> tiled;
  std::unordered_map<int, std::string> from_tile;
  for (size_t id = 0; id < nest.values.size(); ++id) {
    const ValueExpr& e = nest.values[id];
    if (e.op != ValueOp::Load || e.pred >= 0 || e.unit_var != p) continue;
    const std::string name = pre + "tile" + std::to_string(id);
    out += "    __shared__ " + std::string(memory_type(e.dtype)) + " " + name + "[32][33];\n";
    tiled.push_back(static_cast<int>(id));
    from_tile[static_cast<int>(id)] = from_memory(e.dtype, name + "[k][tx]");
  }
  out += "    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;\n";
  out += "    for (vf_i64 t = blockIdx.x; t < tiles; t += gridDim.x) {\n";
  out += "      vf_i64 rest = t;\n";
  out += "      const vf_index tl = (vf_index)(rest % tiles_l) * 32;\n      rest /= tiles_l;\n";
  out += "      const vf_index tp = (vf_index)(rest % tiles_p) * 32;\n      rest /= tiles_p;\n";
  for (size_t d = rank - 1; d-- > 0;) {
    if (static_cast<int>(d) == p) continue;
    out += "      const vf_index " + vars[d] + " = (vf_index)(rest % " + size(d) + ");\n      rest /= " + size(d) + ";\n";
  }
  // Phase 1: threads along p read the tiled loads.
  out += "      for (int k = ty; k < 32; k += blockDim.x / 32) {\n";
  out += "        const vf_index " + vars[p] + " = tp + tx, " + vars[rank - 1] + " = tl + k;\n";
  out += "        if (" + vars[p] + " < " + sp + " && " + vars[rank - 1] + " < " + sl + ") {\n";
  std::vector<int> roots;
  for (int id : tiled) roots.push_back(nest.values[id].index);
  emit_index_defs(nest, roots, vars, "vf_index", "          ", out);
  for (int id : tiled) {
    const ValueExpr& e = nest.values[id];
    out += "          " + pre + "tile" + std::to_string(id) + "[tx][k] = ((const " + memory_type(e.dtype) + "*)a.f" +
           std::to_string(e.param) + ")[" + index_ref(nest, e.index, vars) + "];\n";
  }
  out += "        }\n      }\n      __syncthreads();\n";
  // Phase 2: threads along the innermost dim compute and store.
  out += "      for (int k = ty; k < 32; k += blockDim.x / 32) {\n";
  out += "        const vf_index " + vars[p] + " = tp + k, " + vars[rank - 1] + " = tl + tx;\n";
  out += "        if (" + vars[p] + " < " + sp + " && " + vars[rank - 1] + " < " + sl + ") {\n";
  emit_nest_body(nest, vars, "vf_index", "          ", out, "", &from_tile);
  out += "        }\n      }\n      __syncthreads();\n";
  out += "    }\n  }\n";
}

void emit_nest(const LoopNest& nest, int n, std::string& out) {
  if (const int p = transposed_dim(nest); p >= 0) {
    emit_tiled_nest(nest, n, p, out);
    return;
  }
  const size_t rank = nest.extents.size();
  const std::string p = "n" + std::to_string(n) + "_";
  std::vector<std::string> vars;
  out += "  {\n";
  std::string numel = "(vf_i64)1";
  for (size_t d = 0; d < rank; ++d) {
    out += "    const vf_index " + p + "s" + std::to_string(d) + " = a.f" + std::to_string(nest.extents[d]) + ";\n";
    numel += " * " + p + "s" + std::to_string(d);
    vars.push_back(p + "i" + std::to_string(d));
  }
  out += "    const vf_i64 numel = " + numel + ";\n";
  out += "    vf_i64 start = 0;\n";
  if (nest.flat && !nest.stores.empty()) emit_vector_part(nest, out);
  out += "    for (vf_i64 flat = start + (vf_i64)blockIdx.x * blockDim.x + threadIdx.x; flat < numel;\n";
  out += "         flat += (vf_i64)gridDim.x * blockDim.x) {\n";
  if (nest.flat) {
    out += "      const vf_index flat_i = (vf_index)flat;\n";
    emit_nest_body(nest, vars, "vf_index", "      ", out, "flat_i");
    out += "    }\n  }\n";
    return;
  }
  out += "      vf_index rest = (vf_index)flat;\n";
  for (size_t d = rank; d-- > 0;) {
    const std::string ds = std::to_string(d);
    if (d > 0)
      out += "      const vf_index " + vars[d] + " = rest % " + p + "s" + ds + ";\n      rest /= " + p + "s" + ds + ";\n";
    else
      out += "      const vf_index " + vars[d] + " = rest;\n";
  }
  out += "      (void)rest;\n";
  emit_nest_body(nest, vars, "vf_index", "      ", out);
  out += "    }\n  }\n";
}

}  // namespace

std::string emit_cuda(const KernelIR& ir, const std::string& entry) {
  std::string out = "// Generated by viewfuse (CUDA pointwise kernel).\n";
  out += kPreludeCuda;
  out += kPreludeCommon;
  out += ir.abi.index32 ? "typedef vf_i32 vf_index;\n" : "typedef vf_i64 vf_index;\n";
  emit_args_struct(ir.abi, out);
  out += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(ir.abi.block_size) + ") " + entry +
         "(const VfArgs a) {\n";
  for (size_t n = 0; n < ir.nests.size(); ++n) emit_nest(ir.nests[n], static_cast<int>(n), out);
  out += "}\n";
  return out;
}

}  // namespace vf
