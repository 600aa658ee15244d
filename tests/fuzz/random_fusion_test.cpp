// Random fusions checked against the reference executor, and the generator's and shrinker's own
// properties.
//
// VF_FUZZ_SEED (default 20261202) and VF_FUZZ_COUNT (default 300; 60 in sanitizer builds) choose
// the programs; VF_FUZZ_DEVICE=cuda runs CompiledMatchesReference on the CUDA backend (without it,
// CudaMatchesReference runs the same programs on CUDA wherever a GPU is present);
// VF_FUZZ_REDUCTIONS=0 leaves reductions out and VF_FUZZ_MAX_OPS (default 12) bounds the ops per
// program; the LongRows tests check VF_FUZZ_LONG_COUNT (default 12) programs over a long dim. tests/fuzz/run_parallel.sh runs many in parallel processes. A failure is shrunk and the
// shrunk trace is printed and written under $VF_REPRO_DIR (default <tmp>/viewfuse-repro).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "test_support.h"
#include "frontend/trace_reader.h"
#include "fuzz_check.h"
#include "ir/print_trace.h"
#include "runtime/repro.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "segment/plan_fusion.h"

namespace vf::fuzz {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Writes the shrunk program where the developer can find it; returns the path.
std::string save_failure(const FuzzProgram& program, const std::string& text) {
  std::filesystem::path dir = repro_dir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::path path = dir / ("fuzz-" + std::to_string(program.seed) + ".py");
  std::ofstream(path) << text;
  return path.string();
}

// Checks `count` programs from VF_FUZZ_SEED on `target`, shrinking and reporting failures.
void check_random_fusions(const FuzzTarget& target, uint64_t count, bool long_rows) {
  const uint64_t seed = env_u64("VF_FUZZ_SEED", 20261202);
  std::printf("random fusions%s: VF_FUZZ_SEED=%llu count %llu device %s\n", long_rows ? " with long rows" : "",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(count),
              device_name(target.device));
  GeneratorOptions options;
  options.long_rows = long_rows;
  options.reductions = env_u64("VF_FUZZ_REDUCTIONS", 1) != 0;
  options.max_ops = static_cast<int>(env_u64("VF_FUZZ_MAX_OPS", options.max_ops));
  const auto start = std::chrono::steady_clock::now();
  std::map<Verdict, int> verdicts;
  int failures = 0;
  for (uint64_t i = 0; i < count && failures < 3; ++i) {
    const FuzzProgram program = generate_program(seed + i, options);
    const CheckResult r = check_program(program, target);
    ++verdicts[r.verdict];
    if (r.verdict == Verdict::Ok || r.verdict == Verdict::Invalid) continue;
    ++failures;
    // Shrink while the same kind of failure persists.
    const FuzzProgram small = shrink_program(program, [&](const FuzzProgram& p) {
      return check_program(p, target, /*both=*/true).verdict == r.verdict;
    });
    const CheckResult small_r = check_program(small, target, true);
    const std::string text = program_text(small, std::string(verdict_name(small_r.verdict)) + ": " + small_r.message);
    ADD_FAILURE() << "program seed " << program.seed << " (" << program_summary(program) << "): " << r.message
                  << "\nshrunk to " << program_summary(small) << ", saved at " << save_failure(small, text) << ":\n"
                  << text;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("random fusions: %d ok, %d invalid, %d mismatch, %d error in %.1f s\n", verdicts[Verdict::Ok],
              verdicts[Verdict::Invalid], verdicts[Verdict::Mismatch], verdicts[Verdict::Error], seconds);
  // The generator makes valid programs: nearly all of them are real test cases.
  EXPECT_LE(verdicts[Verdict::Invalid], static_cast<int>(count / 20));
}

// Checks programs on VF_FUZZ_DEVICE's backend (skipped when this machine lacks it).
void check_on_env_target(uint64_t count, bool long_rows) {
  FuzzTarget target;
  try {
    target = fuzz_target_from_env();
  } catch (const DeviceError& e) {
    GTEST_SKIP() << "VF_FUZZ_DEVICE asks for a backend this machine lacks: " << e.what();
  }
  check_random_fusions(target, count, long_rows);
}

// Checks the same programs on CUDA, unless VF_FUZZ_DEVICE=cuda has the env-target test run them
// there already.
void check_on_cuda(uint64_t count, bool long_rows) {
  if (const char* d = std::getenv("VF_FUZZ_DEVICE"); d && std::string(d) == "cuda")
    GTEST_SKIP() << "VF_FUZZ_DEVICE=cuda: the CompiledMatchesReference test runs these on CUDA already";
  check_random_fusions({std::make_shared<CudaBackend>(0), Device::Cuda, nullptr}, count, long_rows);
}

const uint64_t kCount = env_u64("VF_FUZZ_COUNT", VF_FUZZ_DEFAULT_COUNT);
const uint64_t kLongCount = env_u64("VF_FUZZ_LONG_COUNT", 12);

TEST(RandomFusions, CompiledMatchesReference) { check_on_env_target(kCount, false); }

// The same programs on the CUDA backend, wherever a GPU is present (tools/gpu_test.sh).
TEST(RandomFusions, CudaMatchesReference) {
  VF_TEST_REQUIRE_GPU();
  check_on_cuda(kCount, false);
}

// Programs over a dim of tens of thousands, whose reductions of it are split in two stages.
TEST(RandomFusions, LongRows_CompiledMatchesReference) { check_on_env_target(kLongCount, true); }

TEST(RandomFusions, LongRows_CudaMatchesReference) {
  VF_TEST_REQUIRE_GPU();
  check_on_cuda(kLongCount, true);
}

// The long-row programs do reach the reduction split.
TEST(RandomFusionGenerator, LongRows_SomeReductionsAreSplit) {
  GeneratorOptions options;
  options.long_rows = true;
  int split = 0;
  for (uint64_t seed = 20261202; seed < 20261202 + 12; ++seed) {
    std::shared_ptr<Fusion> f = build_fusion(generate_program(seed, options));
    split += plan_fusion(*f, contiguous_input_layouts(*f), {}).rewritten != nullptr;
  }
  std::printf("%d of 12 long-row programs split a reduction\n", split);
  EXPECT_GE(split, 3);
}

TEST(RandomFusionGenerator, SameSeed_SameProgram) {
  for (uint64_t seed : {1, 2, 99}) {
    EXPECT_EQ(program_text(generate_program(seed), ""), program_text(generate_program(seed), ""));
  }
  EXPECT_NE(program_text(generate_program(1), ""), program_text(generate_program(2), ""));
}

// Over a few hundred programs, every op family and every input-layout pattern the issue asks for
// shows up.
TEST(RandomFusionGenerator, CoversOpsAndLayouts) {
  std::set<OpKind> ops;
  bool odd_step = false, negative_pad = false, interior_pad = false, empty_cat_input = false;
  bool empty_input = false, size_one = false, expanded = false, offset = false, permuted = false;
  bool several_outputs = false;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const FuzzProgram p = generate_program(seed);
    std::shared_ptr<Fusion> f = build_fusion(p);
    several_outputs = several_outputs || f->outputs().size() > 1;
    for (const FuzzInput& in : p.inputs) {
      const Layout l = input_layout(in);
      empty_input = empty_input || l.numel() == 0;
      offset = offset || l.offset > 0;
      permuted = permuted || !l.is_contiguous();
      for (size_t d = 0; d < l.sizes.size(); ++d) {
        size_one = size_one || l.sizes[d] == 1;
        expanded = expanded || (l.sizes[d] > 1 && l.strides[d] == 0);
      }
    }
    for (const auto& node : f->nodes()) {
      ops.insert(node->op);
      if (node->op == OpKind::SlicePrim)
        for (int64_t s : node->attr<SliceAttrs>().step) odd_step = odd_step || s > 1;
      if (node->op == OpKind::Pad)
        for (const PadDim& d : node->attr<PadAttrs>().config) {
          negative_pad = negative_pad || d.lo < 0 || d.hi < 0;
          interior_pad = interior_pad || d.interior > 0;
        }
      if (node->op == OpKind::Cat)
        for (const Value* in : node->inputs) empty_cat_input = empty_cat_input || in->numel() == 0;
    }
  }
  for (OpKind op : {OpKind::Transpose, OpKind::Reshape, OpKind::BroadcastInDim, OpKind::SlicePrim, OpKind::Squeeze,
                    OpKind::Pad, OpKind::Cat, OpKind::Flip, OpKind::ConvertElementType, OpKind::Where, OpKind::Add,
                    OpKind::Exp, OpKind::Lt, OpKind::Sum, OpKind::Prod, OpKind::Amax, OpKind::Amin, OpKind::Var,
                    OpKind::VarMean})
    EXPECT_TRUE(ops.count(op)) << op_name(op) << " never generated";
  EXPECT_TRUE(odd_step);
  EXPECT_TRUE(negative_pad);
  EXPECT_TRUE(interior_pad);
  EXPECT_TRUE(empty_cat_input);
  EXPECT_TRUE(empty_input);
  EXPECT_TRUE(size_one);
  EXPECT_TRUE(expanded);
  EXPECT_TRUE(offset);
  EXPECT_TRUE(permuted);
  EXPECT_TRUE(several_outputs);
}

// The repro text of a program reads back to the same fusion and the same input layouts.
TEST(RandomFusionGenerator, ProgramText_ReadsBackWithLayouts) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const FuzzProgram p = generate_program(seed);
    const std::string text = program_text(p, "note");
    Fusion read = read_trace(text, "program");
    EXPECT_EQ(print_trace(read), print_trace(*build_fusion(p))) << text;
    const std::vector<Layout> layouts = read_repro_layouts(text, read);
    ASSERT_EQ(layouts.size(), p.inputs.size());
    for (size_t i = 0; i < layouts.size(); ++i) EXPECT_EQ(layouts[i], input_layout(p.inputs[i])) << text;
    EXPECT_EQ(read_repro_seed(text), p.seed);
  }
}

// A failure that depends on one op's result only shrinks to that op over a single input with sizes of 1.
TEST(FuzzShrinker, FailureNeedingFlip_ShrinksToOneFlip) {
  uint64_t seed = 0;
  // Fails when an output is made by flip.
  auto has_flip = [](const FuzzProgram& p) {
    std::shared_ptr<Fusion> f = build_fusion(p);
    for (const Value* v : f->outputs())
      if (v->producer && v->producer->op == OpKind::Flip) return true;
    return false;
  };
  FuzzProgram p;
  do p = generate_program(++seed);
  while (!has_flip(p) || p.ops.size() < 6);
  const FuzzProgram small = shrink_program(p, has_flip);
  ASSERT_EQ(small.ops.size(), 1u) << program_text(small, "");
  EXPECT_EQ(small.ops[0].op, OpKind::Flip);
  EXPECT_EQ(small.outputs.size(), 1u);
  ASSERT_EQ(small.inputs.size(), 1u) << program_text(small, "");
  for (int64_t n : small.inputs[0].shape) EXPECT_LE(n, 1) << program_text(small, "");
  EXPECT_EQ(small.inputs[0].recipe.offset, 0);
}

// Shrinking keeps the failure: a predicate on an output's size stays true on the result.
TEST(FuzzShrinker, KeepsPredicateTrue) {
  auto big_output = [](const FuzzProgram& p) {
    std::shared_ptr<Fusion> f = build_fusion(p);
    for (const Value* v : f->outputs())
      if (v->numel() >= 10) return true;
    return false;
  };
  int shrunk = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const FuzzProgram p = generate_program(seed);
    if (!big_output(p)) continue;
    const FuzzProgram small = shrink_program(p, big_output);
    EXPECT_TRUE(big_output(small));
    EXPECT_LE(small.ops.size(), p.ops.size());
    ++shrunk;
  }
  EXPECT_GT(shrunk, 5);
}

}  // namespace
}  // namespace vf::fuzz
