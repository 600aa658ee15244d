// Generated CUDA sources compile with NVRTC for sm_90 to CUBIN (compile only; no GPU needed), and
// pack_launch fills the argument block the source declares.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cstring>
#include <functional>
#include <memory>

#include "codegen/generate_kernel.h"
#include "base/error.h"
#include "ir/ir.h"

#ifdef VF_TEST_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace vf {
namespace {

using ::testing::HasSubstr;

KernelSpec contiguous_spec(const Fusion& f) {
  KernelSpec spec{&f, {}, {}};
  for (const Value* v : f.inputs()) spec.input_layouts.push_back(v->is_tensor ? Layout::contiguous(v->shape) : Layout{});
  for (const Value* v : f.outputs()) spec.output_layouts.push_back(Layout::contiguous(v->shape));
  return spec;
}

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
    Value* c = f.add(OpKind::Cat, {a, e, a}, CatAttrs{1});
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
  const OpKind unary[] = {OpKind::Abs, OpKind::Neg, OpKind::Exp, OpKind::Exp2, OpKind::Expm1, OpKind::Log,
                          OpKind::Log1p, OpKind::Log2, OpKind::Log10, OpKind::Sqrt, OpKind::Rsqrt,
                          OpKind::Reciprocal, OpKind::Sin, OpKind::Cos, OpKind::Tan, OpKind::Tanh, OpKind::Sinh,
                          OpKind::Cosh, OpKind::Asin, OpKind::Acos, OpKind::Atan, OpKind::Erf, OpKind::Erfc,
                          OpKind::Erfinv, OpKind::Sign, OpKind::Floor, OpKind::Ceil, OpKind::Round, OpKind::Trunc,
                          OpKind::IsFinite, OpKind::Signbit};
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    make([&](Fusion& f) {
      Value* a = f.add_tensor_input("a", dtype, {9});
      Value* b = f.add_tensor_input("b", dtype, {9});
      Value* s = f.add_scalar_input("s", ScalarKind::Float);
      for (OpKind op : unary) f.add_output(f.add(op, {a}));
      for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Maximum,
                        OpKind::Minimum, OpKind::Fmod, OpKind::Remainder, OpKind::Atan2, OpKind::Lt})
        f.add_output(f.add(op, {a, b}));
      f.add_output(f.add(OpKind::Lerp, {a, b, s}));
    });
  }
  for (DType dtype : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64}) {
    make([&](Fusion& f) {
      Value* a = f.add_tensor_input("a", dtype, {9});
      Value* b = f.add_tensor_input("b", dtype, {9});
      Value* c = f.add_tensor_input("c", DType::Bool, {9});
      for (OpKind op : {OpKind::BitwiseAnd, OpKind::BitwiseOr, OpKind::BitwiseXor, OpKind::Eq, OpKind::Maximum})
        f.add_output(f.add(op, {a, b}));
      f.add_output(f.add(OpKind::Where, {c, a, b}));
      f.add_output(f.add(OpKind::BitwiseNot, {a}));
      if (!is_bool(dtype))
        for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Div, OpKind::Pow, OpKind::Remainder, OpKind::Fmod})
          f.add_output(f.add(op, {a, b}));
      for (DType to : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
                       DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
        f.add_output(f.add(OpKind::ConvertElementType, {a}, CastAttrs{to}));
    });
  }
  return out;
}

#ifdef VF_TEST_HAVE_NVRTC
// Compiles to sm_90 CUBIN; returns the log on failure, "" on success.
std::string nvrtc_compile(const std::string& source) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "vf_kernel.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  const char* opts[] = {"--gpu-architecture=sm_90", "-default-device", "--std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  std::string log;
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(prog, log.data());
  size_t cubin_size = 0;
  if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin_size);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) return "compile failed: " + log;
  if (cubin_size == 0) return "no CUBIN";
  return "";
}
#endif

TEST(CodegenCuda, EveryGeneratedSource_CompilesToSm90Cubin) {
#ifndef VF_TEST_HAVE_NVRTC
  GTEST_SKIP() << "NVRTC (libnvrtc.so, nvrtc.h) was not found at build time";
#else
  auto fusions = sample_fusions();
  for (size_t i = 0; i < fusions.size(); ++i) {
    GeneratedKernel k = generate_kernel(contiguous_spec(*fusions[i]), Target::Cuda);
    EXPECT_EQ(k.source.find("#include"), std::string::npos);
    EXPECT_EQ(nvrtc_compile(k.source), "") << "fusion " << i << "\n" << k.source;
  }
#endif
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
