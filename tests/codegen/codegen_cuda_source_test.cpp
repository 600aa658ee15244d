// Generated CUDA sources compile with NVRTC (the runtime's loader) for sm_90 to CUBIN (the float
// ops' large kernels to PTX); compile only, no GPU needed. pack_launch fills the argument block the source declares.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "base/error.h"
#include "codegen/pack_launch.h"
#include "codegen/specialize_kernel.h"
#include "codegen_test_util.h"
#include "ir/ir.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using test::contiguous_spec;

// A set of fusions covering every op kind the pointwise lowering handles.
std::vector<std::unique_ptr<Fusion>> sample_fusions() {
  std::vector<std::unique_ptr<Fusion>> out;
  auto make = [&](const std::function<void(Fusion&)>& build) {
    out.push_back(std::make_unique<Fusion>());
    build(*out.back());
  };
  make([](Fusion& f) {  // the seed
    Value* x = f.add_tensor_input("x", DType::Float32, {2, 16, 8, 16});
    Value* w = f.add_tensor_input("w", DType::BFloat16, {256});
    Value* t3 = f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}})}, ReshapeAttrs{{2, 8, 256}});
    Value* t5 = f.add(OpKind::BroadcastInDim, {f.add(OpKind::ConvertElementType, {w}, CastAttrs{DType::Float32})},
                      BroadcastAttrs{{2, 8, 256}, {2}});
    f.add_output(f.add(OpKind::Mul, {t3, t5}));
  });
  make([](Fusion& f) {  // movement ops
    Value* a = f.add_tensor_input("a", DType::Float16, {4, 5});
    Value* e = f.add_tensor_input("e", DType::Float16, {4, 0});
    Value* p = f.add(OpKind::Pad, {a, f.add_constant(Scalar::from_float(-1.5))}, PadAttrs{{{-1, 2, 1}, {2, -3, 0}}});
    Value* c = f.add(OpKind::Cat, {a, e, a}, AxisAttrs{1});
    f.add_output(f.add(OpKind::Flip, {c}, DimsAttrs{{0, 1}}));
    f.add_output(p);
    Value* s = f.add(OpKind::SlicePrim, {a}, SliceAttrs{{1, 0}, {4, 5}, {2, 2}});
    f.add_output(f.add(OpKind::Squeeze, {f.add(OpKind::Reshape, {s}, ReshapeAttrs{{1, 6}})}, DimsAttrs{{0}}));
    f.add_output(f.add(OpKind::Iota, {}, IotaAttrs{7, 3, 2, DType::Float32}));
    f.add_output(f.add(OpKind::Full, {}, FullAttrs{{3}, Scalar::from_float(INFINITY), DType::BFloat16}));
  });
  make([](Fusion& f) {  // a transpose-like nest: the tiled schedule
    Value* x = f.add_tensor_input("x", DType::Float16, {3, 40, 50});
    Value* y = f.add_tensor_input("y", DType::Float16, {3, 50, 40});
    f.add_output(f.add(OpKind::Mul, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1}}), y}));
  });
  make([](Fusion& f) {  // the prelude's inline PTX: rounding to bf16 and f16, the tanh gelu's 1 + tanh(u)
    Value* a = f.add_tensor_input("a", DType::BFloat16, {9});
    Value* h = f.add_tensor_input("h", DType::Float16, {9});
    Value* x = f.add_tensor_input("x", DType::Float32, {9});
    f.add_output(f.add(OpKind::Mul, {a, a}));
    f.add_output(f.add(OpKind::Mul, {h, h}));
    Value* one = f.add(OpKind::Full, {}, FullAttrs{{9}, Scalar::from_float(1.0), DType::Float32});
    f.add_output(f.add(OpKind::Mul, {x, f.add(OpKind::Add, {one, f.add(OpKind::Tanh, {x})})}));
  });
  return out;
}

// Every float op at every float dtype, in one kernel per dtype.
std::vector<std::unique_ptr<Fusion>> float_op_fusions() {
  std::vector<std::unique_ptr<Fusion>> out;
  auto make = [&](const std::function<void(Fusion&)>& build) {
    out.push_back(std::make_unique<Fusion>());
    build(*out.back());
  };
  for (DType dtype : test::kFloatDTypes) {
    make([&](Fusion& f) {
      Value* a = f.add_tensor_input("a", dtype, {9});
      Value* b = f.add_tensor_input("b", dtype, {9});
      Value* s = f.add_scalar_input("s", ScalarKind::Float);
      for (OpKind op : test::kUnaryFloatOps) f.add_output(f.add(op, {a}));
      for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Maximum,
                        OpKind::Minimum, OpKind::Fmod, OpKind::Remainder, OpKind::Atan2, OpKind::Lt, OpKind::Zeta})
        f.add_output(f.add(op, {a, b}));
      if (!is_half(dtype)) f.add_output(f.add(OpKind::Nextafter, {a, b}));
      f.add_output(f.add(OpKind::Lerp, {a, b, s}));
    });
  }
  for (DType dtype : test::kBoolAndIntegerDTypes) {
    make([&](Fusion& f) {
      Value* a = f.add_tensor_input("a", dtype, {9});
      Value* b = f.add_tensor_input("b", dtype, {9});
      Value* c = f.add_tensor_input("c", DType::Bool, {9});
      for (OpKind op : {OpKind::BitwiseAnd, OpKind::BitwiseOr, OpKind::BitwiseXor, OpKind::Eq, OpKind::Maximum})
        f.add_output(f.add(op, {a, b}));
      f.add_output(f.add(OpKind::Where, {c, a, b}));
      f.add_output(f.add(OpKind::BitwiseNot, {a}));
      if (!is_bool(dtype))
        for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Remainder, OpKind::Fmod,
                          OpKind::BitwiseLeftShift, OpKind::BitwiseRightShift})
          f.add_output(f.add(op, {a, b}));
      for (DType to : test::kAllDTypes) f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{to}));
    });
  }
  return out;
}

// Each fusion's kernel and the same kernel specialized to its sizes (codegen/specialize_kernel.h),
// compiled for sm_90 on every core (NVRTC is thread-safe); the checks run on this thread.
// `ptx_only`: NVRTC's front end and optimizer without ptxas.
std::vector<CompiledCuda> compile_all(const std::vector<std::unique_ptr<Fusion>>& fusions, bool ptx_only) {
  std::vector<GeneratedKernel> kernels;
  for (const auto& f : fusions) {
    GeneratedKernel k = generate_kernel(contiguous_spec(*f), Target::Cuda);
    EXPECT_EQ(k.source.find("#include"), std::string::npos);
    GeneratedKernel specialized = specialize_for_spec(k, contiguous_spec(*f), 132);
    kernels.push_back(std::move(k));
    kernels.push_back(std::move(specialized));
  }
  std::vector<std::optional<CompiledCuda>> compiled(kernels.size());
  std::vector<std::string> errors(kernels.size());
  std::atomic<size_t> next{0};
  NvrtcOptions options;
  options.ptx_only = ptx_only;
  auto work = [&] {
    for (size_t i; (i = next++) < kernels.size();) {
      try {
        compiled[i] = nvrtc_compile(kernels[i].source, kernels[i].entry, 9, 0, options);
      } catch (const DeviceError& e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  std::vector<CompiledCuda> out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    SCOPED_TRACE("fusion " + std::to_string(i / 2) + (i % 2 ? ", specialized" : ""));
    EXPECT_TRUE(compiled[i].has_value()) << errors[i] << "\n" << kernels[i].source;
    if (compiled[i]) out.push_back(std::move(*compiled[i]));
  }
  return out;
}

TEST(CodegenCuda, EveryGeneratedSource_CompilesToSm90Cubin) {
  VF_TEST_REQUIRE_NVRTC();
  const std::byte elf_magic[4] = {std::byte{0x7f}, std::byte{'E'}, std::byte{'L'}, std::byte{'F'}};
  for (const CompiledCuda& c : compile_all(sample_fusions(), false)) {
    EXPECT_TRUE(c.is_cubin) << "compiled to " << c.arch;
    EXPECT_EQ(c.arch, "sm_90");
    ASSERT_GE(c.image.size(), 4u);
    EXPECT_EQ(std::memcmp(c.image.data(), elf_magic, 4), 0) << "the CUBIN is not an ELF file";
  }
}

// The float ops' kernels to PTX: ptxas on these kernels of some 40 transcendental outputs took 7 to
// 37 s each (110 s of this suite on two cores); the GPU suite compiles and runs the same ops to
// CUBIN (CodegenGpu.ElementwiseOpsAndCasts_MatchCpu).
TEST(CodegenCuda, FloatOps_CompileToSm90Ptx) {
  VF_TEST_REQUIRE_NVRTC();
  for (const CompiledCuda& c : compile_all(float_op_fusions(), true)) {
    EXPECT_FALSE(c.is_cubin);
    EXPECT_EQ(c.arch, "compute_90");
    const std::string ptx(reinterpret_cast<const char*>(c.image.data()), c.image.size());
    EXPECT_THAT(ptx, HasSubstr(".entry vf_pointwise_"));
  }
}

TEST(CodegenCuda, TransposeNest_UsesSharedMemoryTiles) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {64, 48});
  f.add_output(f.add(OpKind::Neg, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{1, 0}})}));
  const std::string source = generate_kernel(contiguous_spec(f), Target::Cuda).source;
  EXPECT_THAT(source, HasSubstr("__shared__ float"));
  EXPECT_THAT(source, HasSubstr("__syncthreads()"));
  // Elementwise on contiguous buffers needs no tiles.
  Fusion g;
  g.add_output(g.add(OpKind::Neg, {g.add_tensor_input("x", DType::Float32, {64, 48})}));
  EXPECT_EQ(generate_kernel(contiguous_spec(g), Target::Cuda).source.find("__shared__"), std::string::npos);
}

// A cat whose source ranges start at multiples of the pack loads each source's packs whole under
// one guard per pack (zero when the guard is false); otherwise element by element.
TEST(CodegenCuda, CatOfPackAlignedRanges_LoadsGuardedPacks) {
  auto source = [](int64_t half) {
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::BFloat16, {4, 3, 2 * half});
    Value* lo = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, 0}, {4, 3, half}, {1, 1, 1}});
    Value* hi = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0, half}, {4, 3, 2 * half}, {1, 1, 1}});
    // The permute makes the nest not flat, so that it takes the row-vector schedule.
    Value* rot = f.add(OpKind::Cat, {f.add(OpKind::Neg, {hi}), lo}, AxisAttrs{2});
    f.add_output(f.add(OpKind::Transpose, {rot}, PermuteAttrs{{1, 0, 2}}));
    return generate_kernel(contiguous_spec(f), Target::Cuda).source;
  };
  const std::string aligned = source(64);
  EXPECT_THAT(aligned, HasSubstr("[u] = {};"));  // a source's pack outside its range
  EXPECT_THAT(aligned, HasSubstr("*(const vf_pack<vf_u16, 8>*)"));
  EXPECT_EQ(source(12).find("[u] = {};"), std::string::npos);  // halves of 12: packs of 8 straddle
}

// Every vector load of a thread is unconditional (a step past the end reads the last pack again
// and does not store it), so that the compiler issues them all before the first use: with a
// `break` in the loop that loads, nvcc computed and stored the first pack before loading the second.
TEST(CodegenCuda, VectorLoops_LoadEveryPackUnconditionally) {
  auto load_loop = [](const std::string& source) {
    const size_t begin = source.find("for (int u = 0;");
    EXPECT_NE(begin, std::string::npos) << source;
    return begin == std::string::npos ? "" : source.substr(begin, source.find("#pragma unroll", begin) - begin);
  };
  Fusion flat;  // contiguous: the flat vector loop over packs
  flat.add_output(flat.add(OpKind::Add, {flat.add_tensor_input("a", DType::Float32, {1024}),
                                         flat.add_tensor_input("b", DType::Float32, {1024})}));
  const std::string flat_loop = load_loop(generate_kernel(contiguous_spec(flat), Target::Cuda).source);
  EXPECT_THAT(flat_loop, HasSubstr(" : packs - 1;"));
  EXPECT_EQ(flat_loop.find("break"), std::string::npos) << flat_loop;
  Fusion rows;  // a permute that keeps the innermost dim: the row-vector loop over steps
  Value* x = rows.add_tensor_input("x", DType::BFloat16, {2, 4, 8, 64});
  rows.add_output(rows.add(OpKind::Neg, {rows.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}})}));
  const std::string row_loop = load_loop(generate_kernel(contiguous_spec(rows), Target::Cuda).source);
  EXPECT_THAT(row_loop, HasSubstr(" : steps - 1;"));
  EXPECT_EQ(row_loop.find("break"), std::string::npos) << row_loop;
}

TEST(CodegenCuda, IndexWidth_FollowsLayoutClass) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4, 8});
  f.add_output(f.add(OpKind::Exp, {a}));
  KernelSpec small = contiguous_spec(f);
  EXPECT_TRUE(generate_kernel(small, Target::Cuda).abi.index32);
  EXPECT_THAT(generate_kernel(small, Target::Cuda).source, HasSubstr("typedef vf_i32 vf_index;"));
  KernelSpec big = small;
  big.input_layouts[0].strides = {int64_t{1} << 30, 1};  // spans more than 2^31 elements
  EXPECT_FALSE(generate_kernel(big, Target::Cuda).abi.index32);
  // The vector loops count packs in the index type.
  EXPECT_THAT(generate_kernel(small, Target::Cuda).source, HasSubstr("const vf_index q0 = "));
  EXPECT_THAT(generate_kernel(big, Target::Cuda).source, HasSubstr("const vf_i64 q0 = "));
  EXPECT_FALSE(generate_kernel(small, Target::Cpu).abi.index32);
}

TEST(CodegenCuda, PackLaunch_FillsFieldsAtAbiOffsets) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {4, 8});
  Value* s = f.add_scalar_input("s", ScalarKind::Float);
  f.add_output(f.add(OpKind::Mul, {f.add(OpKind::Transpose, {a}, PermuteAttrs{{1, 0}}), s}));
  KernelSpec spec = contiguous_spec(f);
  spec.input_layouts[0] = Layout{{4, 8}, {16, 1}, 3};  // the transpose is a view of it
  GeneratedKernel k = generate_kernel(spec, Target::Cuda);
  float in_buf[64], out_buf[32];
  const Layout out_layout = Layout::contiguous({8, 4});
  KernelBuffer ins[2] = {{in_buf, &spec.input_layouts[0]}, {nullptr, nullptr}};
  KernelBuffer outs[1] = {{out_buf, &out_layout}};
  Scalar scalars[2] = {Scalar{}, Scalar::from_float(2.5)};
  KernelArgs args{ins, scalars, outs, nullptr};
  LaunchBlock block;
  pack_launch(k, args, 132, block);
  ASSERT_EQ(block.args.size(), k.abi.size);
  EXPECT_EQ(block.cpu_extent, 32);
  EXPECT_EQ(block.grid, 1u);
  EXPECT_EQ(block.block, 256u);
  int seen = 0;
  for (const AbiField& fld : k.abi.fields) {
    const std::byte* at = block.args.data() + fld.offset;
    if (fld.kind == AbiFieldKind::InputData) {
      void* p;
      std::memcpy(&p, at, 8);
      EXPECT_EQ(p, in_buf);
      ++seen;
    } else if (fld.kind == AbiFieldKind::ScalarF64) {
      double d;
      std::memcpy(&d, at, 8);
      EXPECT_EQ(d, 2.5);
      ++seen;
    } else if (fld.kind == AbiFieldKind::ViewOffset) {
      ASSERT_EQ(fld.type, AbiFieldType::I32);
      int32_t v;
      std::memcpy(&v, at, 4);
      EXPECT_EQ(v, 3);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
  // The composed view is recomputed for another input layout; one whose view has a stride
  // other than 1 where the kernel assumed 1 (another layout class) is refused.
  const Layout same_class{{4, 8}, {40, 1}, 0};
  ins[0].layout = &same_class;
  EXPECT_NO_THROW(pack_launch(k, args, 132, block));
  const Layout other{{4, 8}, {16, 2}, 0};
  ins[0].layout = &other;
  EXPECT_THROW(pack_launch(k, args, 132, block), InternalError);
}

}  // namespace
}  // namespace vf
