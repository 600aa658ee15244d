// specialize_kernel: the generic kernel's source with a baked argument struct and, on CUDA, its launch shape.
#include "codegen/specialize_kernel.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "codegen/emit_source.h"

namespace vf {
namespace {

bool pointers_aligned(const KernelAbi& abi, const std::byte* block) {
  for (const AbiField& f : abi.fields) {
    if (f.type != AbiFieldType::Ptr) continue;
    uintptr_t p;
    std::memcpy(&p, block + f.offset, sizeof p);
    if (p % 16 != 0) return false;
  }
  return true;
}

}  // namespace

GeneratedKernel specialize_kernel(const GeneratedKernel& generic, const LaunchBlock& block) {
  VF_INTERNAL_CHECK(generic.baked.empty(), "specialize_kernel: the kernel is specialized already");
  VF_INTERNAL_CHECK(block.args.size() == generic.abi.size, "specialize_kernel: a block of ", block.args.size(),
                    " bytes for an argument struct of ", generic.abi.size);
  GeneratedKernel k = generic;
  k.baked = block.args;
  k.baked_grid = block.grid;
  k.aligned_pointers = generic.target == Target::Cuda && pointers_aligned(generic.abi, block.args.data());

  std::string generic_struct, baked_struct;
  emit_args_struct(generic.abi, generic_struct);
  emit_args_struct(generic.abi, baked_struct, k.baked.data(), k.aligned_pointers);
  const size_t at = k.source.find(generic_struct);
  VF_INTERNAL_CHECK(at != std::string::npos, "specialize_kernel: the source has no argument struct");
  k.source.replace(at, generic_struct.size(), baked_struct);
  if (generic.target == Target::Cuda) {
    // The launch shape, defined before the prelude (prelude_cuda.inc), after the first line.
    const size_t line = k.source.find('\n');
    VF_INTERNAL_CHECK(line != std::string::npos, "specialize_kernel: a source of one line");
    k.source.insert(line + 1, "#define VF_BAKED_GRID " + std::to_string(block.grid) + "\n#define VF_BAKED_BLOCK " +
                                  std::to_string(block.block) + "\n");
  }
  return k;
}

bool specialization_matches(const GeneratedKernel& specialized, const LaunchBlock& block) {
  if (block.grid != specialized.baked_grid || block.args.size() != specialized.baked.size()) return false;
  const std::byte* launch = block.args.data();
  for (const AbiField& f : specialized.abi.fields) {
    if (!is_baked_field(f)) continue;
    if (std::memcmp(launch + f.offset, specialized.baked.data() + f.offset, abi_field_size(f.type)) != 0) return false;
  }
  return !specialized.aligned_pointers || pointers_aligned(specialized.abi, launch);
}

GeneratedKernel specialize_for_spec(const GeneratedKernel& generic, const KernelSpec& spec, int sm_count) {
  const size_t inputs = spec.input_layouts.size(), outputs = spec.output_layouts.size();
  std::vector<KernelBuffer> in(inputs), out(outputs);
  std::vector<Scalar> scalars(inputs);
  // Placeholder addresses, 256 bytes apart (any 16-byte aligned values would do).
  uintptr_t next = 256;
  for (size_t i = 0; i < inputs; ++i) {
    if (!spec.fusion->inputs()[i]->is_tensor) continue;
    in[i] = {reinterpret_cast<void*>(next), &spec.input_layouts[i]};
    next += 256;
  }
  for (size_t o = 0; o < outputs; ++o) {
    out[o] = {reinterpret_cast<void*>(next), &spec.output_layouts[o]};
    next += 256;
  }
  KernelArgs args{in, scalars, out, nullptr};
  LaunchBlock block;
  pack_launch(generic, args, sm_count, block);
  return specialize_kernel(generic, block);
}

}  // namespace vf
