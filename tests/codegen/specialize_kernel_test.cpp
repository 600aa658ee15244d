// Size specialization (codegen/specialize_kernel.h): what the specialized source bakes in, which
// launches it matches, and that specialized CUDA sources compile for sm_90 (NVRTC only, no GPU).
#include "codegen/specialize_kernel.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "codegen_test_util.h"
#include "ir/ir.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

// out = permute(x * 0.5, [0, 2, 1, 3]) reshaped to [B, S, H * D], bf16: the merge-heads producer.
struct Producer {
  Fusion fusion;
  Producer(int64_t b, int64_t h, int64_t s, int64_t d) {
    Value* x = fusion.add_tensor_input("x", DType::BFloat16, {b, h, s, d});
    Value* y = fusion.add(OpKind::Mul, {x, fusion.add_constant(Scalar::from_float(0.5))});
    Value* t = fusion.add(OpKind::Transpose, {y}, PermuteAttrs{{0, 2, 1, 3}});
    fusion.add_output(fusion.add(OpKind::Reshape, {t}, ReshapeAttrs{{b, s, h * d}}));
  }
};

// A launch of `kernel` on the spec's layouts with the given data addresses.
LaunchBlock packed(const GeneratedKernel& kernel, const KernelSpec& spec, uintptr_t in, uintptr_t out) {
  KernelBuffer inputs[] = {{reinterpret_cast<void*>(in), &spec.input_layouts[0]}};
  KernelBuffer outputs[] = {{reinterpret_cast<void*>(out), &spec.output_layouts[0]}};
  Scalar scalars[1] = {};
  LaunchBlock block;
  pack_launch(kernel, KernelArgs{inputs, scalars, outputs, nullptr}, 132, block);
  return block;
}

TEST(SpecializeKernel, Producer_BakesSizesAndLaunchShapeKeepsArgumentLayout) {
  Producer p(2, 8, 64, 32);
  const KernelSpec spec = test::contiguous_spec(p.fusion);
  const GeneratedKernel generic = generate_kernel(spec, Target::Cuda);
  const LaunchBlock block = packed(generic, spec, 4096, 8192);
  const GeneratedKernel special = specialize_kernel(generic, block);
  EXPECT_EQ(special.abi.size, generic.abi.size);
  EXPECT_EQ(special.baked.size(), generic.abi.size);
  EXPECT_TRUE(special.aligned_pointers);
  EXPECT_EQ(special.baked_grid, block.grid);
  EXPECT_NE(special.source.find("#define VF_BAKED_GRID " + std::to_string(block.grid) + "\n"), std::string::npos);
  EXPECT_NE(special.source.find("#define VF_BAKED_BLOCK " + std::to_string(block.block) + "\n"), std::string::npos);
  EXPECT_NE(special.source.find("vf_ptr16 f"), std::string::npos);
  // Every size of the output, [2, 64, 256], and of the iteration space is a constant.
  for (const char* size : {" = 2;", " = 64;", " = 8;", " = 32;"})
    EXPECT_NE(special.source.find(size), std::string::npos) << size << "\n" << special.source;
  // The body is the generic kernel's.
  const std::string body_from = generic.entry + "(const VfArgs a) {\n";
  EXPECT_EQ(special.source.substr(special.source.find(body_from)), generic.source.substr(generic.source.find(body_from)));
  EXPECT_EQ(generic.source.find("#define VF_BAKED_GRID"), std::string::npos);
}

TEST(SpecializeKernel, Matches_OnlyTheLaunchItWasMadeFor) {
  Producer big(2, 8, 64, 32), small(2, 8, 48, 32);
  const KernelSpec spec = test::contiguous_spec(big.fusion), other = test::contiguous_spec(small.fusion);
  const GeneratedKernel generic = generate_kernel(spec, Target::Cuda);
  ASSERT_EQ(generate_kernel(other, Target::Cuda).source, generic.source) << "one layout class";
  const GeneratedKernel special = specialize_kernel(generic, packed(generic, spec, 4096, 8192));
  EXPECT_TRUE(specialization_matches(special, packed(generic, spec, 4096, 8192)));
  EXPECT_TRUE(specialization_matches(special, packed(generic, spec, 1 << 20, 3 << 20))) << "other aligned buffers";
  EXPECT_FALSE(specialization_matches(special, packed(generic, other, 4096, 8192))) << "another size";
  EXPECT_FALSE(specialization_matches(special, packed(generic, spec, 4098, 8192))) << "an unaligned input";
  EXPECT_FALSE(specialization_matches(special, packed(generic, spec, 4096, 8200))) << "an unaligned output";
}

TEST(SpecializeKernel, UnalignedLaunch_SpecializedWithoutAlignedPointers) {
  Producer p(1, 2, 3, 5);
  const KernelSpec spec = test::contiguous_spec(p.fusion);
  const GeneratedKernel generic = generate_kernel(spec, Target::Cuda);
  const GeneratedKernel special = specialize_kernel(generic, packed(generic, spec, 4098, 8192));
  EXPECT_FALSE(special.aligned_pointers);
  EXPECT_EQ(special.source.find("vf_ptr16 f"), std::string::npos);
  EXPECT_TRUE(specialization_matches(special, packed(generic, spec, 4100, 8192)));
}

TEST(SpecializeKernel, CpuKernel_BakesValuesWithoutLaunchShape) {
  Producer p(2, 8, 64, 32);
  const KernelSpec spec = test::contiguous_spec(p.fusion);
  const GeneratedKernel generic = generate_kernel(spec, Target::Cpu);
  const GeneratedKernel special = specialize_for_spec(generic, spec, 132);
  EXPECT_NE(special.source.find("static constexpr"), std::string::npos);
  EXPECT_EQ(special.source.find("VF_BAKED_GRID"), std::string::npos);
  EXPECT_FALSE(special.aligned_pointers);
}

TEST(SpecializeKernel, SpecializedSources_CompileToSm90Cubin) {
  VF_TEST_REQUIRE_NVRTC();
  for (const auto& [b, h, s, d] : {std::array<int64_t, 4>{2, 8, 64, 32}, {16, 32, 2048, 128}, {1, 3, 5, 7}}) {
    Producer p(b, h, s, d);
    const KernelSpec spec = test::contiguous_spec(p.fusion);
    test::expect_sm90_cubin(specialize_for_spec(generate_kernel(spec, Target::Cuda), spec, 132));
  }
}

}  // namespace
}  // namespace vf
