// Helpers for codegen tests: tensors with chosen layouts, op and dtype lists, CUDA skips, CPU runs,
// NVRTC compiles.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/error.h"
#include "base/half.h"
#include "codegen/generate_kernel.h"
#include "codegen/kernel_spec.h"
#include "ir/ir.h"
#include "layout/host_tensor.h"
#include "reference/compare.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_api.h"
#include "runtime/cuda_device.h"
#include "runtime/nvrtc_compiler.h"
#include "test_support.h"

namespace vf::test {

// CPU backend options with the per-user disk cache of compiled kernels (VF_CACHE_DIR in CI): a
// second run of the suite (./dev test's sanitizer pass) loads the kernels the first one compiled
// instead of compiling them again. The compile path runs wherever the cache misses; the disk
// cache has tests of its own (tests/runtime/cpu_disk_cache_test.cpp).
inline CpuBackendOptions cached_cpu_options() {
  CpuBackendOptions options;
  options.cache_dir = CpuBackend::default_cache_dir();
  return options;
}

// One CPU backend per test binary: its compiled kernels are shared by the tests.
inline CpuBackend& backend() {
  static CpuBackend b(cached_cpu_options());
  return b;
}

// A float constant of f.
inline Value* constant(Fusion& f, double v) { return f.add_constant(Scalar::from_float(v)); }

// Every unary op on floating dtypes that the pointwise lowering handles.
inline constexpr std::array<OpKind, 40> kUnaryFloatOps = {
    OpKind::Abs,   OpKind::Neg,  OpKind::Exp,  OpKind::Exp2,  OpKind::Expm1,      OpKind::Log,  OpKind::Log1p,
    OpKind::Log2,  OpKind::Log10, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Reciprocal, OpKind::Sin,  OpKind::Cos,
    OpKind::Tan,   OpKind::Tanh, OpKind::Sinh, OpKind::Cosh,  OpKind::Asin,       OpKind::Acos, OpKind::Atan,
    OpKind::Erf,   OpKind::Erfc, OpKind::Erfinv, OpKind::Sign, OpKind::Floor,     OpKind::Ceil, OpKind::Round,
    OpKind::Trunc, OpKind::IsFinite, OpKind::Signbit, OpKind::Acosh, OpKind::Asinh, OpKind::Atanh,
    OpKind::Lgamma, OpKind::Digamma, OpKind::Erfcinv, OpKind::Ndtri, OpKind::FrexpMantissa, OpKind::FrexpExponent};

// Bool and the integer dtypes, the floating dtypes, and all of them.
inline constexpr std::array<DType, 6> kBoolAndIntegerDTypes = {DType::Bool,  DType::UInt8, DType::Int8,
                                                               DType::Int16, DType::Int32, DType::Int64};
inline constexpr std::array<DType, 4> kFloatDTypes = {DType::Float16, DType::BFloat16, DType::Float32,
                                                      DType::Float64};
inline constexpr std::array<DType, 10> kAllDTypes = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int16,
                                                     DType::Int32,   DType::Int64,    DType::Float16, DType::BFloat16,
                                                     DType::Float32, DType::Float64};

// Compiles `k` for sm_90 and returns the result; a compile error is a test failure that prints
// NVRTC's message and the source, and gives nullopt.
inline std::optional<CompiledCuda> expect_sm90_cubin(const GeneratedKernel& k) {
  try {
    CompiledCuda compiled = nvrtc_compile(k.source, k.entry, 9, 0);
    EXPECT_TRUE(compiled.is_cubin) << k.entry << " compiled to " << compiled.arch;
    return compiled;
  } catch (const DeviceError& e) {
    ADD_FAILURE() << e.what() << "\n" << k.source;
    return std::nullopt;
  }
}

// A spec with contiguous layouts for every tensor input and output of `f`.
inline KernelSpec contiguous_spec(const Fusion& f) {
  KernelSpec spec{&f, {}, {}};
  for (const Value* v : f.inputs()) spec.input_layouts.push_back(v->is_tensor ? Layout::contiguous(v->shape) : Layout{});
  for (const Value* v : f.outputs()) spec.output_layouts.push_back(Layout::contiguous(v->shape));
  return spec;
}

// A tensor with `layout` over a fresh zeroed storage large enough for it.
inline HostTensor tensor_with_layout(DType dtype, const Layout& layout) {
  const int64_t elems = std::max<int64_t>(layout.storage_extent(), 1);
  auto storage = std::make_shared<Storage>(elems * dtype_size(dtype));
  return HostTensor::view_of(dtype, layout, storage);
}

// Writes v (converted to the dtype) at a multi-index.
inline void set_value(const HostTensor& t, const int64_t* index, double v) {
  std::byte* p = t.element(index);
  switch (t.dtype()) {
    case DType::Bool: { uint8_t x = v != 0; std::memcpy(p, &x, 1); break; }
    case DType::UInt8: { uint8_t x = static_cast<uint8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
    case DType::Int8: { int8_t x = static_cast<int8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
    case DType::Int16: { int16_t x = static_cast<int16_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 2); break; }
    case DType::Int32: { int32_t x = static_cast<int32_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 4); break; }
    case DType::Int64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case DType::Float16: { uint16_t x = float_to_half(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case DType::BFloat16: { uint16_t x = float_to_bfloat16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case DType::Float32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case DType::Float64: { std::memcpy(p, &v, 8); break; }
  }
}

// Fills every element with fn(row-major position).
inline void fill(const HostTensor& t, const std::function<double(int64_t)>& fn) {
  int64_t k = 0;
  for_each_index(t.shape(), [&](const int64_t* idx) { set_value(t, idx, fn(k++)); });
}

// A 1-D tensor of dtype holding v.
inline HostTensor from_values(DType dtype, const std::vector<double>& v) {
  HostTensor t = HostTensor::empty(dtype, {static_cast<int64_t>(v.size())});
  fill(t, [&](int64_t k) { return v[k]; });
  return t;
}

// zeta(x, q) of two 1-D tensors, and x and q at its domain's cases: x at and near 1, large x, q
// small, negative (integer and not), between the direct sum and the Euler-Maclaurin tail.
inline Fusion zeta_fusion(DType dtype) {
  Fusion f;
  Value* x = f.add_tensor_input("x", dtype, {14});
  Value* q = f.add_tensor_input("q", dtype, {14});
  f.add_output(f.add(OpKind::Zeta, {x, q}));
  return f;
}
inline std::vector<HostTensor> zeta_domain_inputs(DType dtype) {
  return {from_values(dtype, {1.0, 1.0001, 1.5, 2.0, 2.0, 3.0, 4.5, 10.0, 30.0, 2.0, 3.0, 2.5, 0.5, 7.0}),
          from_values(dtype, {2.0, 1.0, 0.001, 1.0, -1.5, 0.5, 9.5, 3.0, 1.0, -3.0, -2.5, -1.5, 1.0, 100.0})};
}

// Values in row-major order, as doubles.
inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> out;
  for_each_index(t.shape(), [&](const int64_t* idx) { out.push_back(t.get_double(idx)); });
  return out;
}

// Runs the fusion's kernel on `inputs` (tensors; scalars through `scalars`) into new outputs
// with the given layouts (contiguous when empty).
inline std::vector<HostTensor> run_cpu(CpuBackend& backend, const Fusion& fusion, const std::vector<HostTensor>& inputs,
                                       std::vector<Layout> out_layouts = {}, std::vector<Scalar> scalars = {}) {
  KernelSpec spec;
  spec.fusion = &fusion;
  std::vector<KernelBuffer> in_bufs;
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    if (fusion.inputs()[i]->is_tensor) {
      spec.input_layouts.push_back(inputs[i].layout());
      in_bufs.push_back({inputs[i].storage()->data(), &inputs[i].layout()});
    } else {
      spec.input_layouts.push_back(Layout{});
      in_bufs.push_back({nullptr, nullptr});
    }
  }
  scalars.resize(fusion.inputs().size());
  std::vector<HostTensor> outs;
  for (size_t o = 0; o < fusion.outputs().size(); ++o) {
    const Value* v = fusion.outputs()[o];
    Layout l = o < out_layouts.size() ? out_layouts[o] : Layout::contiguous(v->shape);
    outs.push_back(tensor_with_layout(v->dtype, l));
    spec.output_layouts.push_back(l);
  }
  std::vector<KernelBuffer> out_bufs;
  for (const auto& t : outs) out_bufs.push_back({t.storage()->data(), &t.layout()});
  auto kernel = backend.prepare(spec);
  KernelArgs args;
  args.inputs = in_bufs;
  args.scalars = scalars;
  args.outputs = out_bufs;
  kernel->launch(args);
  return outs;
}

// Strides for `shape` whose memory order (outermost first) is `order`.
inline Layout permuted_layout(const Shape& shape, const std::vector<int64_t>& order, int64_t offset = 0) {
  Layout l{shape, std::vector<int64_t>(shape.size(), 0), offset};
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    l.strides[order[k]] = stride;
    stride *= std::max<int64_t>(shape[order[k]], 1);
  }
  return l;
}

// Runs the fusion on the CPU backend and on the reference executor; expects equal results with
// the dtype's default tolerance (exact for integers) or `tol` when given.
inline void expect_matches_reference(CpuBackend& backend, const Fusion& fusion, const std::vector<HostTensor>& inputs,
                                     std::vector<Layout> out_layouts = {}, std::vector<Scalar> scalars = {},
                                     const Tolerance* tol = nullptr) {
  std::vector<HostArg> args;
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    if (fusion.inputs()[i]->is_tensor)
      args.emplace_back(inputs[i]);
    else
      args.emplace_back(scalars.at(i));
  }
  std::vector<HostTensor> expected = run_reference(fusion, args);
  std::vector<HostTensor> actual = run_cpu(backend, fusion, inputs, out_layouts, scalars);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    Comparison c = compare_tensors(actual[o], expected[o], tol ? *tol : default_tolerance(expected[o].dtype()));
    EXPECT_TRUE(c.ok) << "output " << o << ": " << c.mismatches << " mismatches, first " << c.first_mismatch;
  }
}

}  // namespace vf::test
