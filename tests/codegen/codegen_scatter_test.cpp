// scatter_add (and index_add and embedding_backward, which the trace reader writes as it) in
// kernels, against the reference executor on the CPU and, where there is a GPU, on CUDA: an
// embedding's backward in bf16 (float32 sums, rounded once), sources computed and read through
// views in the scatter's kernel, an index narrower than the source, a base that is not zeros, the
// integer dtypes (exact), an empty index, a source that needs a reduction (written first, with
// the column sums that read the same rows), scatter_max onto fulls and tensors of each integer
// width, and an index out of range (a UserError on the CPU; skipped on CUDA, nothing written out of bounds).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "backend_test.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

class Scatters : public test::BackendTest {};

int scatter_kernels(const Plan& plan) {
  return test::kernels_where(plan, [](const LoopNest& n) { return n.scatter; });
}

// nanoGPT's wte gradient at a small size: 4096 tokens into 1000 rows of 64, many repeats.
TEST_P(Scatters, EmbeddingBackwardBf16_MatchesReference) {
  const Plan plan = check_trace(
      "def f(g, idx):\n  # g: \"cpu bf16[4, 1024, 64]\"\n  # idx: \"cpu i64[4, 1024]\"\n"
      "  t0 = ltorch.embedding_backward(g, idx, 1000, -1, False, False)\n  return t0\n",
      4096);
  EXPECT_EQ(scatter_kernels(plan), 1);
  EXPECT_EQ(plan.kernel_count(), 2);  // the scatter in f32, then its rounding to bf16
}

// Llama's case at a small size, 512 tokens into 3000 rows of 64: the sums in a row per token
// (passes/compact_row_scatters.h), read back at the rows the ids name and rounded.
TEST_P(Scatters, EmbeddingBackwardFewTokens_CompactedMatchesReference) {
  const Plan plan = check_trace(
      "def f(g, idx):\n  # g: \"cpu bf16[2, 256, 64]\"\n  # idx: \"cpu i64[2, 256]\"\n"
      "  t0 = ltorch.embedding_backward(g, idx, 3000, -1, False, False)\n  return t0\n",
      512);
  EXPECT_EQ(scatter_kernels(plan), 2);  // the rows' last tokens (a scatter_max), then the sums
  EXPECT_EQ(plan.kernel_count(), 3);
}

// A padding row, int32 indices, and the result used by an elementwise consumer in f32.
TEST_P(Scatters, EmbeddingBackwardPaddingF32_MatchesReference) {
  check_trace(
      "def f(g, idx, w):\n  # g: \"cpu f32[6, 33]\"\n  # idx: \"cpu i32[6]\"\n  # w: \"cpu f32[9, 33]\"\n"
      "  t0 = prims.embedding_backward(g, idx, 9, 2, False, False)\n  t1 = prims.add(t0, w)\n  return t1\n",
      6);
}

// The source is computed (exp of a transpose) in the scatter's kernel; the index is narrower than
// the source along dim 1 and computed from an input (a remainder); dim 1.
TEST_P(Scatters, ComputedSourceAndIndex_OneScatterKernel) {
  const Plan plan = check_trace(
      "def f(x, i):\n  # x: \"cpu f32[40, 30]\"\n  # i: \"cpu i64[30, 20]\"\n"
      "  a = prims.full((30, 17), 0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)\n"
      "  xt = prims.transpose(x, (1, 0))\n  s = prims.exp(xt)\n  j = prims.remainder(i, 17)\n"
      "  t0 = prims.scatter_add(a, j, s, 1)\n  return t0\n",
      40);
  EXPECT_EQ(plan.kernel_count(), 1);
}

// index_add onto an input: onto zeros, then the input added in the consumer's kernel.
TEST_P(Scatters, IndexAddOntoInput_MatchesReference) {
  check_trace(
      "def f(a, i, v):\n  # a: \"cpu f32[50, 8]\"\n  # i: \"cpu i64[300]\"\n  # v: \"cpu f32[300, 8]\"\n"
      "  t0 = prims.index_add(a, i, v, 0)\n  t1 = prims.mul(t0, 0.5)\n  return (t0, t1)\n",
      300);
}

// Integers are exact, whatever the order: int32, int64, and int8 (summed in int64, wrapped once).
TEST_P(Scatters, IntegerDtypes_Exact) {
  for (const char* dtype : {"i32", "i64", "i8"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    check_trace("def f(a, i, s):\n  # a: \"cpu " + d + "[7, 5]\"\n  # i: \"cpu i64[200, 5]\"\n  # s: \"cpu " + d +
                    "[200, 5]\"\n  t0 = prims.scatter_add(a, i, s, 0)\n  return t0\n",
                1);
  }
}

// scatter_max is exact on every backend: onto an input (the lowest, then the largest with it), onto
// fulls that the launch fills (i32 7; i64 -5, whose words differ; i64 -1, whose words are equal),
// and i8 (in i32). Random sources are below and above the fills.
TEST_P(Scatters, ScatterMaxOntoFullsAndInputs_Exact) {
  const Plan plan = check_trace(
      "def f(a, b, i, s):\n  # a: \"cpu i32[7, 5]\"\n  # b: \"cpu i8[7, 5]\"\n  # i: \"cpu i64[200, 5]\"\n"
      "  # s: \"cpu i32[200, 5]\"\n"
      "  z = prims.full((7, 5), 7, device=devices.Device(\"cpu\"), dtype=dtypes.int32)\n"
      "  y = prims.full((7, 5), -5, device=devices.Device(\"cpu\"), dtype=dtypes.int64)\n"
      "  x = prims.full((7, 5), -1, device=devices.Device(\"cpu\"), dtype=dtypes.int64)\n"
      "  s64 = prims.convert_element_type(s, dtypes.int64)\n  s8 = prims.convert_element_type(s, dtypes.int8)\n"
      "  t0 = prims.scatter_max(a, i, s, 0)\n  t1 = prims.scatter_max(z, i, s, 0)\n"
      "  t2 = prims.scatter_max(y, i, s64, 0)\n  t3 = prims.scatter_max(x, i, s64, 0)\n"
      "  t4 = prims.scatter_max(b, i, s8, 0)\n  return (t0, t1, t2, t3, t4)\n",
      1);
  EXPECT_EQ(scatter_kernels(plan), 5);
  for (const Segment& seg : plan.segments)
    if (seg.kernel && seg.kernel->nests[0].scatter) {
      EXPECT_THAT(seg.note, HasSubstr("atomic maxes"));
    }
}

// f64, a 3-D scatter along the middle dim, and an empty index (the result is a).
TEST_P(Scatters, Float64MiddleDimAndEmpty_MatchReference) {
  check_trace(
      "def f(a, i, s, e):\n  # a: \"cpu f64[3, 6, 4]\"\n  # i: \"cpu i64[3, 10, 4]\"\n  # s: \"cpu f64[3, 10, 4]\"\n"
      "  # e: \"cpu i64[3, 0, 4]\"\n"
      "  t0 = prims.scatter_add(a, i, s, 1)\n  t1 = prims.scatter_add(a, e, s, 1)\n  return (t0, t1)\n",
      10);
}

// A source that needs a reduction: it is written first by its own kernel, then scattered.
TEST_P(Scatters, SourceNeedsReduction_WrittenFirst) {
  const Plan plan = check_trace(
      "def f(x, i):\n  # x: \"cpu f32[64, 32]\"\n  # i: \"cpu i64[64, 32]\"\n"
      "  a = prims.full((16, 32), 0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)\n"
      "  m = prims.amax(x, (1,))\n  mb = prims.broadcast_in_dim(m, (64, 32), (0,))\n  s = prims.sub(x, mb)\n"
      "  t0 = prims.scatter_add(a, i, s, 0)\n  return t0\n",
      64);
  EXPECT_EQ(scatter_kernels(plan), 1);
  bool noted = false;
  for (const Segment& s : plan.segments) noted |= s.note.find("written first") != std::string::npos;
  EXPECT_TRUE(noted);
}

// The source's kernel also writes the row maxima that a later kernel (the column sum of x scaled
// by them) needs: the amax is computed once, not again in a kernel of its own.
TEST_P(Scatters, SourceReductionReadLater_ComputedOnce) {
  const Plan plan = check_trace(
      "def f(x, i):\n  # x: \"cpu f32[64, 32]\"\n  # i: \"cpu i64[64, 32]\"\n"
      "  a = prims.full((16, 32), 0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)\n"
      "  m = prims.amax(x, (1,))\n  mb = prims.broadcast_in_dim(m, (64, 32), (0,))\n  s = prims.sub(x, mb)\n"
      "  t0 = prims.scatter_add(a, i, s, 0)\n  e = prims.mul(x, mb)\n  t1 = prims.sum(e, (0,))\n  return (t0, t1)\n",
      64);
  int amax_kernels = 0;
  for (const Segment& seg : plan.segments)  // the plan keeps the program (Plan::source) alive
    amax_kernels += std::any_of(seg.nodes.begin(), seg.nodes.end(), [](const Node* n) { return n->op == OpKind::Amax; });
  EXPECT_EQ(amax_kernels, 1);
  bool noted = false;
  for (const Segment& seg : plan.segments) noted |= seg.note.find("also writes m") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Llama's last RMS norm backward beside the embedding's gradient, small: the gradient rows the
// scatter adds need each row's sum (written first), and the norm weight's gradient sums columns of
// the same input. The kernel that writes the rows also computes the weight gradient's chunk
// partials, so one kernel reads x and g.
TEST_P(Scatters, SourceKernelComputesColumnPartials_OneReadOfRows) {
  const Plan plan = check_trace(
      "def f(x, g, w, idx):\n  # x: \"cpu bf16[2, 1024, 64]\"\n  # g: \"cpu bf16[2, 1024, 64]\"\n"
      "  # w: \"cpu bf16[64]\"\n  # idx: \"cpu i64[2, 1024]\"\n"
      "  xf = prims.convert_element_type(x, dtypes.float32)\n  gf = prims.convert_element_type(g, dtypes.float32)\n"
      "  wf = prims.convert_element_type(w, dtypes.float32)\n"
      "  wb = prims.broadcast_in_dim(wf, (2, 1024, 64), (2,))\n  gw = prims.mul(gf, wb)\n"
      "  p = prims.mul(gw, xf)\n  s = prims.sum(p, (2,))\n  sb = prims.broadcast_in_dim(s, (2, 1024, 64), (0, 1))\n"
      "  q = prims.mul(sb, xf)\n  d = prims.sub(gw, q)\n  db = prims.convert_element_type(d, dtypes.bfloat16)\n"
      "  e = ltorch.embedding_backward(db, idx, 300, -1, False, False)\n"
      "  r = prims.mul(gf, xf)\n  wg = prims.sum(r, (0, 1))\n  wgb = prims.convert_element_type(wg, dtypes.bfloat16)\n"
      "  return (e, wgb)\n",
      2048);
  auto reads_x = [](const Node* n) { return !n->inputs.empty() && n->inputs[0]->name == "x"; };
  int kernels_reading_x = 0;
  for (const Segment& seg : plan.segments)
    kernels_reading_x += seg.kind == SegmentKind::Kernel && std::any_of(seg.nodes.begin(), seg.nodes.end(), reads_x);
  EXPECT_EQ(kernels_reading_x, 1);
  bool noted = false;
  for (const Segment& seg : plan.segments) noted |= seg.note.find("also computes wg_partial") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_P(Scatters, IndexOutOfRange_CpuReportsCudaSkips) {
  auto f = std::make_shared<Fusion>(read_trace(
      "def f(a, i, s):\n  # a: \"cpu f32[4, 3]\"\n  # i: \"cpu i64[3, 3]\"\n  # s: \"cpu f32[3, 3]\"\n"
      "  t0 = prims.scatter_add(a, i, s, 0)\n  return t0\n"));
  CompiledFusion compiled(f, ExecutorOptions{.device = GetParam()}, backend_);
  const HostTensor a = random_tensor(DType::Float32, {4, 3}, 5);
  const HostTensor s = random_tensor(DType::Float32, {3, 3}, 6);
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{1} << 40}) {
    SCOPED_TRACE(bad);
    HostTensor ids = HostTensor::empty(DType::Int64, {3, 3});
    const int64_t values[9] = {1, 1, 1, bad, bad, bad, 3, 3, 3};
    std::memcpy(ids.element(std::vector<int64_t>{0, 0}.data()), values, sizeof values);
    std::vector<Arg> args{copy_to(to_tensor(a), GetParam()), copy_to(to_tensor(ids), GetParam()),
                          copy_to(to_tensor(s), GetParam())};
    if (GetParam() == Device::Cpu) {
      try {
        compiled.run(args);
        ADD_FAILURE() << "no error for index " << bad;
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("prims.scatter_add t0_sums (dim 0 of size 4 of f32[4, 3]): index " +
                                        std::to_string(bad) + " is out of range"));
      }
      continue;
    }
    // CUDA skips the row of bad indices: rows 1 and 3 got theirs, 0 and 2 nothing.
    const HostTensor out = host_copy(compiled.run(args).at(0));
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t r = 0; r < 4; ++r) {
        const int64_t at[2] = {r, j};
        double expected = a.get_double(at);
        const int64_t from[2] = {r == 1 ? 0 : 2, j};
        if (r == 1 || r == 3) expected = static_cast<float>(expected + s.get_double(from));
        EXPECT_EQ(out.get_double(at), expected) << "at [" << r << ", " << j << "]";
      }
    }
  }
}

// PlanOptions::deterministic_scatters: the embedding's backward in f32 with many repeats equals the
// reference bit for bit (on CUDA too: a thread walks the tokens in order), twice the same.
TEST_P(Scatters, Deterministic_ExactlyTheReference) {
  auto f = std::make_shared<Fusion>(read_trace(
      "def f(g, idx, x, i):\n  # g: \"cpu f32[2, 1024, 48]\"\n  # idx: \"cpu i64[2, 1024]\"\n"
      "  # x: \"cpu f32[30, 40]\"\n  # i: \"cpu i64[30, 20]\"\n"
      "  t0 = ltorch.embedding_backward(g, idx, 20, -1, False, False)\n"
      "  a = prims.full((30, 7), 0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)\n"
      "  j = prims.remainder(i, 7)\n  t1 = prims.scatter_add(a, j, x, 1)\n  return (t0, t1)\n"));
  const std::vector<HostArg> inputs = random_inputs(*f, 77);
  CompiledFusion compiled(f, ExecutorOptions{.device = GetParam(), .plan = PlanOptions{.deterministic_scatters = true}},
                          backend_);
  std::vector<Arg> args;
  for (const HostArg& a : inputs) args.push_back(copy_to(to_tensor(std::get<HostTensor>(a)), GetParam()));
  const std::vector<HostTensor> expected = run_reference(*f, inputs);
  for (int round = 0; round < 2; ++round) {
    const std::vector<Tensor> outs = compiled.run(args);
    for (size_t o = 0; o < outs.size(); ++o) {
      const Comparison c = compare_tensors(host_copy(outs[o]), expected[o], Tolerance{});
      EXPECT_TRUE(c.ok) << "output " << o << ": " << c.first_mismatch << " (" << c.mismatches << " mismatches)";
    }
  }
  for (const Segment& s : compiled.plan_for(args).segments) {
    if (!s.kernel || !s.kernel->nests[0].scatter) continue;
    EXPECT_THAT(s.note, HasSubstr("in the index's order"));
    if (GetParam() == Device::Cpu && test::nvrtc_checks_enabled()) {  // the CUDA walk in order compiles
      const GeneratedKernel k = generate_kernel(s.spec, *s.kernel, Target::Cuda);
      EXPECT_THAT(k.source, HasSubstr("; ++n0_i"));
      EXPECT_NO_THROW(nvrtc_compile(k.source, "ordered_scatter", 9, 0)) << k.source;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Scatters, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

}  // namespace
}  // namespace vf
