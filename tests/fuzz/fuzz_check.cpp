// Checking a random fusion against the reference executor, and shrinking a failing one.
#include "fuzz_check.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "base/error.h"
#include "codegen/generate_kernel.h"
#include "codegen/specialize_kernel.h"
#include "reference/compare.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/executor.h"
#include "runtime/nvrtc_compiler.h"

namespace vf::fuzz {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Invalid: return "invalid";
    case Verdict::Mismatch: return "mismatch";
    case Verdict::Error: return "error";
  }
  return "?";
}

FuzzTarget fuzz_target_from_env() {
  const char* device = std::getenv("VF_FUZZ_DEVICE");
  if (device && std::strcmp(device, "cuda") == 0) return {std::make_shared<CudaBackend>(0), Device::Cuda, nullptr};
  CpuBackendOptions options;
  options.inline_extent = 64;
  FuzzTarget target{std::make_shared<CpuBackend>(options), Device::Cpu, nullptr};
  // VF_TEST_NVRTC as test_support.h's nvrtc_checks_enabled() reads it (this library has no GoogleTest).
  const char* nvrtc = std::getenv("VF_TEST_NVRTC");
  if (!(nvrtc && std::strcmp(nvrtc, "0") == 0) && nvrtc_available())
    target.nvrtc_sources = std::make_shared<std::unordered_set<std::string>>();
  return target;
}

namespace {

CheckResult run_once(const Fusion& fusion, const std::shared_ptr<const Fusion>& shared,
                     const std::vector<HostArg>& host_args, const std::vector<HostTensor>& expected,
                     const FuzzTarget& target, bool bookend) {
  const char* mode = bookend ? "bookend on" : "bookend off";
  std::vector<HostTensor> actual;
  try {
    CompiledFusion compiled(shared, ExecutorOptions{.device = target.device, .plan = {.bookend = bookend}}, target.backend);
    std::vector<Arg> args;
    for (const HostArg& a : host_args) {
      if (const HostTensor* t = std::get_if<HostTensor>(&a))
        args.push_back(copy_to(to_tensor(*t), target.device));
      else
        args.push_back(std::get<Scalar>(a));
    }
    // The whole buffer of every input (gaps included), to check that the run writes none of them.
    std::vector<std::vector<std::byte>> before;
    for (const Arg& a : args)
      if (const Tensor* t = std::get_if<Tensor>(&a); t && t->device == Device::Cpu)
        before.emplace_back(t->data, t->data + t->buffer_bytes);
    for (const Tensor& t : compiled.run(args)) actual.push_back(host_copy(t));
    if (target.nvrtc_sources) {
      const std::string problem = cuda_compile_problem(compiled.plan_for(args), *target.nvrtc_sources);
      if (!problem.empty()) return {Verdict::Error, std::string(mode) + ": " + problem};
    }
    size_t k = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      const Tensor* t = std::get_if<Tensor>(&args[i]);
      if (!t || t->device != Device::Cpu) continue;
      if (!std::equal(before[k].begin(), before[k].end(), t->data))
        return {Verdict::Mismatch, std::string(mode) + ": the run wrote into the buffer of input " +
                                       fusion.inputs()[i]->name};
      ++k;
    }
  } catch (const std::exception& e) {
    return {Verdict::Error, std::string(mode) + ": " + e.what()};
  }
  if (actual.size() != expected.size())
    return {Verdict::Error, std::string(mode) + ": " + std::to_string(actual.size()) + " outputs, expected " +
                                std::to_string(expected.size())};
  for (size_t i = 0; i < actual.size(); ++i) {
    const Value* v = fusion.outputs()[i];
    Comparison c = compare_tensors(actual[i], expected[i], output_tolerance(v));
    if (!c.ok) {
      std::ostringstream msg;
      msg << mode << ": output " << i << " (" << v->name << ": " << v->type_string() << ") differs from the reference: "
          << c.mismatches << " mismatches, first " << c.first_mismatch;
      return {Verdict::Mismatch, msg.str()};
    }
  }
  return {};
}

}  // namespace

std::string cuda_compile_problem(const Plan& plan, std::unordered_set<std::string>& seen) {
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    if (plan.segments[s].kind != SegmentKind::Kernel) continue;
    const GeneratedKernel k = generate_kernel(plan.segments[s].spec, Target::Cuda);
    if (!seen.insert(k.source).second) continue;
    // The generic kernel, and the one specialized to the segment's sizes (as a repeated run makes it).
    const GeneratedKernel special = specialize_for_spec(k, plan.segments[s].spec, 132);
    for (const GeneratedKernel* kernel : {&k, &special}) {
      try {
        NvrtcOptions options;
        options.ptx_only = true;  // half the time; the GPU suite makes CUBINs of these and runs them
        nvrtc_compile(kernel->source, kernel->entry, 9, 0, options);
      } catch (const DeviceError& e) {
        return std::string("the ") + (kernel == &k ? "" : "specialized ") + "CUDA kernel of segment #" +
               std::to_string(s) + " does not compile for sm_90: " + e.what();
      }
    }
  }
  return "";
}

CheckResult check_program(const FuzzProgram& program, const FuzzTarget& target, bool both) {
  std::shared_ptr<Fusion> fusion;
  std::vector<HostArg> host_args;
  std::vector<HostTensor> expected;
  try {
    fusion = build_fusion(program);
    host_args = make_inputs(program);
    expected = run_reference(*fusion, host_args);
  } catch (const UserError& e) {
    return {Verdict::Invalid, e.what()};
  }
  if (!both) return run_once(*fusion, fusion, host_args, expected, target, program.seed % 2 == 1);
  for (bool bookend : {false, true}) {
    CheckResult r = run_once(*fusion, fusion, host_args, expected, target, bookend);
    if (r.verdict != Verdict::Ok) return r;
  }
  return {};
}

namespace {

// The program without the ops for which drop_op is true, nor anything that reads their results;
// returns false when no output survives.
bool without_ops(const FuzzProgram& p, const std::vector<bool>& drop_op, FuzzProgram& out) {
  out = p;
  out.ops.clear();
  out.outputs.clear();
  const int n = p.num_values();
  std::vector<int> remap(n, -1);
  int next = 0;
  for (size_t i = 0; i < p.inputs.size(); ++i) remap[i] = next++;
  int value = static_cast<int>(p.inputs.size());
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const FuzzOp& op = p.ops[k];
    const int results = op_num_outputs(op.op);
    bool keep = !drop_op[k];
    for (const FuzzOperand& o : op.operands)
      if (o.value >= 0 && remap[o.value] < 0) keep = false;
    if (keep) {
      FuzzOp copy = op;
      for (FuzzOperand& o : copy.operands)
        if (o.value >= 0) o.value = remap[o.value];
      out.ops.push_back(copy);
      for (int r = 0; r < results; ++r) remap[value + r] = next++;
    }
    value += results;
  }
  for (int o : p.outputs)
    if (remap[o] >= 0 && std::find(out.outputs.begin(), out.outputs.end(), remap[o]) == out.outputs.end())
      out.outputs.push_back(remap[o]);
  return !out.outputs.empty();
}

// Index of the first result of op k.
int first_result(const FuzzProgram& p, size_t k) {
  int v = static_cast<int>(p.inputs.size());
  for (size_t i = 0; i < k; ++i) v += op_num_outputs(p.ops[i].op);
  return v;
}

// Candidate simplifications of p, smallest-first in spirit: each is a whole program.
std::vector<FuzzProgram> candidates(const FuzzProgram& p) {
  std::vector<FuzzProgram> out;
  FuzzProgram c;
  // Fewer outputs.
  for (size_t i = 0; p.outputs.size() > 1 && i < p.outputs.size(); ++i) {
    c = p;
    c.outputs.erase(c.outputs.begin() + static_cast<int64_t>(i));
    out.push_back(c);
  }
  // Ops nothing depends on any more.
  {
    std::vector<bool> live(p.num_values(), false);
    for (int o : p.outputs) live[o] = true;
    std::vector<bool> drop(p.ops.size(), false);
    bool any = false;
    for (size_t k = p.ops.size(); k-- > 0;) {
      const int first = first_result(p, k);
      bool used = false;
      for (int r = 0; r < op_num_outputs(p.ops[k].op); ++r) used = used || live[first + r];
      if (!used) {
        drop[k] = any = true;
        continue;
      }
      for (const FuzzOperand& o : p.ops[k].operands)
        if (o.value >= 0) live[o.value] = true;
    }
    if (any && without_ops(p, drop, c)) out.push_back(c);
  }
  // One op dropped (with its dependents), last first.
  for (size_t k = p.ops.size(); k-- > 0;) {
    std::vector<bool> drop(p.ops.size(), false);
    drop[k] = true;
    if (without_ops(p, drop, c)) out.push_back(c);
  }
  // One op bypassed: its uses read one of its tensor operands instead.
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const int first = first_result(p, k);
    for (const FuzzOperand& src : p.ops[k].operands) {
      if (src.value < 0) continue;
      c = p;
      for (size_t j = k + 1; j < c.ops.size(); ++j)
        for (FuzzOperand& o : c.ops[j].operands)
          if (o.value == first) o.value = src.value;
      for (int& o : c.outputs)
        if (o == first) o = src.value;
      std::vector<bool> drop(c.ops.size(), false);
      drop[k] = true;
      FuzzProgram d;
      if (without_ops(c, drop, d)) out.push_back(d);
    }
  }
  // Unused inputs removed.
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    bool used = std::find(p.outputs.begin(), p.outputs.end(), static_cast<int>(i)) != p.outputs.end();
    for (const FuzzOp& op : p.ops)
      for (const FuzzOperand& o : op.operands) used = used || o.value == static_cast<int>(i);
    if (used) continue;
    c = p;
    c.inputs.erase(c.inputs.begin() + static_cast<int64_t>(i));
    auto fix = [&](int& v) { if (v > static_cast<int>(i)) --v; };
    for (FuzzOp& op : c.ops)
      for (FuzzOperand& o : op.operands)
        if (o.value >= 0) fix(o.value);
    for (int& o : c.outputs) fix(o);
    out.push_back(c);
  }
  // Simpler layouts and smaller sizes.
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const FuzzInput& in = p.inputs[i];
    const LayoutRecipe& r = in.recipe;
    auto with = [&](auto&& edit) {
      c = p;
      edit(c.inputs[i]);
      out.push_back(c);
    };
    if (r.offset != 0) with([](FuzzInput& x) { x.recipe.offset = 0; });
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (r.expanded[d]) with([d](FuzzInput& x) { x.recipe.expanded[d] = false; });
      if (r.gap[d] != 0) with([d](FuzzInput& x) { x.recipe.gap[d] = 0; });
      if (r.one_stride[d] != 1) with([d](FuzzInput& x) { x.recipe.one_stride[d] = 1; });
    }
    if (!std::is_sorted(r.order.begin(), r.order.end()))
      with([](FuzzInput& x) { std::sort(x.recipe.order.begin(), x.recipe.order.end()); });
    if (in.dtype != DType::Float32) with([](FuzzInput& x) { x.dtype = DType::Float32; });
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const int64_t n = in.shape[d];
      for (int64_t smaller : {int64_t{1}, n / 2, n - 1})
        if (smaller >= 1 && smaller < n) with([d, smaller](FuzzInput& x) { x.shape[d] = smaller; });
    }
  }
  return out;
}

}  // namespace

FuzzProgram shrink_program(FuzzProgram program, const std::function<bool(const FuzzProgram&)>& fails,
                           int max_checks) {
  int checks = 0;
  for (bool progress = true; progress && checks < max_checks;) {
    progress = false;
    for (const FuzzProgram& c : candidates(program)) {
      if (++checks > max_checks) break;
      // A candidate that no longer builds is not a simplification of this failure.
      try {
        build_fusion(c);
      } catch (const UserError&) {
        continue;
      }
      if (fails(c)) {
        program = c;
        progress = true;
        break;
      }
    }
  }
  return program;
}

std::string program_summary(const FuzzProgram& p) {
  int64_t elements = 0;
  for (const FuzzInput& in : p.inputs) elements += shape_numel(in.shape);
  std::ostringstream out;
  out << p.ops.size() << " ops, " << p.outputs.size() << " outputs, " << p.inputs.size() << " inputs of "
      << elements << " elements";
  return out.str();
}

}  // namespace vf::fuzz
