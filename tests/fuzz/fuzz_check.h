// Differential checking of random fusions (the compiled path against the reference executor) and
// the shrinking of a failing program to a small one that still fails.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_set>

#include "random_fusion.h"
#include "runtime/backend.h"
#include "segment/plan.h"
#include "runtime/tensor.h"

namespace vf::fuzz {

enum class Verdict {
  Ok,
  Invalid,   // the program does not build or the reference rejects it: not a test case
  Mismatch,  // an output differs from the reference beyond the dtype's tolerance
  Error,     // the compiled path threw where the reference did not
};
const char* verdict_name(Verdict v);

struct CheckResult {
  Verdict verdict = Verdict::Ok;
  std::string message;  // what differed, or the exception's message
};

// Where a program runs: a backend shared by every check (so kernels are cached) and a device.
struct FuzzTarget {
  std::shared_ptr<Backend> backend;
  Device device = Device::Cpu;
  // CPU runs: also compile the CUDA source of every kernel the plan makes with NVRTC for sm_90
  // (each distinct source once), so that a machine without a GPU checks the CUDA emitter too.
  std::shared_ptr<std::unordered_set<std::string>> nvrtc_sources;
};

// The backend named by VF_FUZZ_DEVICE ("cpu", the default, or "cuda"); the CPU backend runs
// launches of 64 work items or more on its thread pool so that small fusions exercise it too, and
// NVRTC compiles the CUDA kernels when it can be loaded (VF_TEST_NVRTC=0 turns that off).
FuzzTarget fuzz_target_from_env();

// The first kernel of `plan` whose CUDA source NVRTC does not compile to sm_90 PTX, with NVRTC's
// message ("" when every one compiles). Sources in `seen` are skipped; new ones are added.
std::string cuda_compile_problem(const Plan& plan, std::unordered_set<std::string>& seen);

// Runs the program with and without bookend (bookend chosen by seed parity when `both` is false)
// and compares every output with the reference.
CheckResult check_program(const FuzzProgram& program, const FuzzTarget& target, bool both = false);

// Repeatedly applies the first simplification that keeps `fails` true: dropping an output, an op
// (with what depends on it) or an unused input, routing an op's uses to its operand, simplifying
// an input layout, shrinking a size. Stops at a fixpoint or after `max_checks` calls of `fails`.
FuzzProgram shrink_program(FuzzProgram program, const std::function<bool(const FuzzProgram&)>& fails,
                           int max_checks = 2000);

// Size of a program for reports: ops, outputs, inputs and total input elements.
std::string program_summary(const FuzzProgram& program);

}  // namespace vf::fuzz
