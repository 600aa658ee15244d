// pack_launch: the argument block of one launch, from its buffers' addresses and layouts.
#include "codegen/pack_launch.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "base/error.h"
#include "layout/view_algebra.h"

namespace vf {
namespace {

// A baked stride class holds when the dim has at most one element or the stride matches it.
void check_classes(const std::vector<uint8_t>& classes, const Layout& l, const char* what, int index) {
  VF_INTERNAL_CHECK(classes.empty() || classes.size() == l.sizes.size(), "pack_launch: ", what, " ", index,
                    " has rank ", l.rank(), ", the kernel was generated for rank ", classes.size());
  for (size_t d = 0; d < classes.size(); ++d) {
    const auto c = static_cast<StrideClass>(classes[d]);
    if (c == StrideClass::Any || l.sizes[d] <= 1) continue;
    VF_INTERNAL_CHECK(stride_class(l.strides[d]) == c, "pack_launch: ", what, " ", index, " layout ",
                      l.to_string(), " does not have the layout class the kernel was generated for");
  }
}

Layout compose_view(const AbiView& v, const Layout& input) {
  Layout l = input;
  for (const Node& step : v.steps) {
    ViewResult r = view_layout(step, l);
    VF_INTERNAL_CHECK(r.is_view(), "pack_launch: a view the kernel loads through needs a copy for input layout ",
                      input.to_string(), ": ", r.copy_reason);
    l = std::move(*r.layout);
  }
  return l;
}

}  // namespace

// For s = ceil(log2 d): m = floor(2^32 * (2^s - d) / d) + 1 (below 2^32, as 2^s - d < d).
uint64_t divider_bits(int64_t d) {
  VF_INTERNAL_CHECK(d >= 0 && d < (int64_t{1} << 31), "a divider of ", d, " is out of 32-bit index math");
  const uint64_t u = d == 0 ? 1 : static_cast<uint64_t>(d);
  const uint64_t s = u == 1 ? 0 : 64 - static_cast<uint64_t>(std::countl_zero(u - 1));
  const uint64_t m = ((uint64_t{1} << 32) * ((uint64_t{1} << s) - u)) / u + 1;
  return (m & 0xffffffffu) | (s << 32);
}

void pack_launch(const GeneratedKernel& kernel, const KernelArgs& args, int sm_count, LaunchBlock& block) {
  const KernelAbi& abi = kernel.abi;
  VF_INTERNAL_CHECK(args.inputs.size() == abi.input_classes.size() && args.outputs.size() == abi.output_classes.size(),
                    "pack_launch: ", args.inputs.size(), " inputs and ", args.outputs.size(),
                    " outputs for a kernel of ", abi.input_classes.size(), " and ", abi.output_classes.size());
  for (size_t i = 0; i < args.inputs.size(); ++i)
    if (args.inputs[i].layout) check_classes(abi.input_classes[i], *args.inputs[i].layout, "input", static_cast<int>(i));
  for (size_t o = 0; o < args.outputs.size(); ++o) {
    VF_INTERNAL_CHECK(args.outputs[o].layout != nullptr, "pack_launch: output ", o, " has no layout");
    check_classes(abi.output_classes[o], *args.outputs[o].layout, "output", static_cast<int>(o));
  }
  for (int32_t i : abi.contiguous_inputs)
    VF_INTERNAL_CHECK(args.inputs[i].layout->is_contiguous(), "pack_launch: input ", i, " layout ",
                      args.inputs[i].layout->to_string(), " is not contiguous; the kernel was generated for one");
  for (int32_t o : abi.contiguous_outputs)
    VF_INTERNAL_CHECK(args.outputs[o].layout->is_contiguous(), "pack_launch: output ", o, " layout ",
                      args.outputs[o].layout->to_string(), " is not contiguous; the kernel was generated for one");
  // Composed view layouts: the spec's when the input layout is the spec's, recomputed otherwise.
  std::vector<Layout> recomputed;
  auto view_of = [&](int v) -> const Layout& {
    const AbiView& view = abi.views[v];
    const Layout& in = *args.inputs[view.input].layout;
    if (in == view.spec_input_layout) return view.spec_view_layout;
    if (recomputed.empty()) recomputed.resize(abi.views.size());
    if (recomputed[v].sizes.empty() && recomputed[v].strides.empty()) {
      recomputed[v] = compose_view(view, in);
      check_classes(abi.view_classes[v], recomputed[v], "view", v);
    }
    return recomputed[v];
  };
  for (int32_t v : abi.contiguous_views)
    VF_INTERNAL_CHECK(view_of(v).is_contiguous(), "pack_launch: view ", v, " layout ", view_of(v).to_string(),
                      " is not contiguous; the kernel was generated for one");
  block.args.resize(abi.size);
  std::byte* base = block.args.data();
  for (const AbiField& f : abi.fields) {
    int64_t i64 = 0;
    double f64 = 0;
    void* ptr = nullptr;
    switch (f.kind) {
      case AbiFieldKind::InputData: ptr = args.inputs[f.a].data; break;
      case AbiFieldKind::OutputData: ptr = args.outputs[f.a].data; break;
      case AbiFieldKind::InputSize: i64 = args.inputs[f.a].layout->sizes[f.b]; break;
      case AbiFieldKind::InputStride: i64 = args.inputs[f.a].layout->strides[f.b]; break;
      case AbiFieldKind::InputOffset: i64 = args.inputs[f.a].layout->offset; break;
      case AbiFieldKind::OutputSize: i64 = args.outputs[f.a].layout->sizes[f.b]; break;
      case AbiFieldKind::OutputStride: i64 = args.outputs[f.a].layout->strides[f.b]; break;
      case AbiFieldKind::OutputOffset: i64 = args.outputs[f.a].layout->offset; break;
      case AbiFieldKind::ViewStride: i64 = view_of(f.a).strides[f.b]; break;
      case AbiFieldKind::ViewOffset: i64 = view_of(f.a).offset; break;
      case AbiFieldKind::Constant: i64 = f.value; break;
      case AbiFieldKind::ScalarF64: f64 = args.scalars[f.a].as_double(); break;
      case AbiFieldKind::ScalarI64: {
        const Scalar& s = args.scalars[f.a];
        i64 = s.kind == ScalarKind::Float ? static_cast<int64_t>(s.f) : s.i;
        break;
      }
      case AbiFieldKind::Divider: continue;  // below, from the size fields
      case AbiFieldKind::IndexError: break;   // null: a backend that reads errors sets its own
    }
    std::byte* at = base + f.offset;
    switch (f.type) {
      case AbiFieldType::Ptr: std::memcpy(at, &ptr, sizeof ptr); break;
      case AbiFieldType::I64: std::memcpy(at, &i64, 8); break;
      case AbiFieldType::F64: std::memcpy(at, &f64, 8); break;
      case AbiFieldType::I32: {
        VF_INTERNAL_CHECK(i64 >= -kIndex32Limit && i64 < kIndex32Limit, "pack_launch: value ", i64,
                          " does not fit the kernel's 32-bit index math");
        const auto i32 = static_cast<int32_t>(i64);
        std::memcpy(at, &i32, 4);
        break;
      }
    }
  }
  for (const AbiField& f : abi.fields) {
    if (f.kind != AbiFieldKind::Divider) continue;
    const int64_t n = abi_int_field(abi.fields[static_cast<size_t>(f.a)], base);
    const uint64_t packed = divider_bits((n + f.b - 1) / f.b);
    std::memcpy(base + f.offset, &packed, 8);
  }
  // Nests with a grain get a block per grain of their points or rows: each block makes one pass
  // of its loop (a vector nest's pass has no loop, so every grain needs its block). The others'
  // grid-stride loops get at most one wave of the blocks the device keeps resident, since blocks
  // beyond it would only start after the first ones finish.
  const int64_t per_sm = abi.blocks_per_sm > 0 ? abi.blocks_per_sm : 8;
  const int64_t wave = static_cast<int64_t>(sm_count > 0 ? sm_count : 1) * per_sm;
  int64_t total = 0, grid = 1;
  for (const AbiNest& n : abi.nests) {
    // A reduction nest's work item is a row; on CUDA, a team of n.team threads takes a row.
    const int64_t work = n.output >= 0 ? args.outputs[n.output].layout->numel() : n.rows;
    total += work;
    const int64_t threads = n.output >= 0 ? work : work * n.team;
    const int64_t blocks = n.grain > 0 ? (work + n.grain - 1) / n.grain
                                       : std::min(wave, (threads + abi.block_size - 1) / abi.block_size);
    VF_INTERNAL_CHECK(blocks <= std::numeric_limits<int32_t>::max(), "pack_launch: ", blocks,
                      " blocks of a grain of ", n.grain, " exceed the grid's limit of 2^31 - 1");
    grid = std::max(grid, blocks);
  }
  block.cpu_extent = total;
  block.block = static_cast<uint32_t>(abi.block_size);
  block.grid = static_cast<uint32_t>(std::min<int64_t>(grid, std::numeric_limits<int32_t>::max()));
  block.shared_bytes = 0;
}

}  // namespace vf
