// The viewfuse command-line tool: run, explain and codegen for Thunder traces.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "codegen/generate_kernel.h"
#include "codegen/print_kernel_ir.h"
#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/executor.h"
#include "runtime/repro.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"
#include "tools/viewfuse/backends.h"

namespace {

constexpr int kExitOk = 0, kExitMismatch = 1, kExitBadInput = 2;

struct RunOptions {
  std::string trace;
  std::string device = "cpu";
  bool check = false;
  uint64_t seed = 0;
  bool bookend = false;
  bool keep_round_trips = false;
  bool no_epilogues = false;
  bool deterministic = false;
  int64_t column_chunks = vf::kColumnChunks;
  bool json = false;
  std::string target = "cpu";
  bool specialize = false;
  bool kernel_ir = false;
  int sm_count = 132;
};

vf::PlanOptions plan_options(const RunOptions& o) {
  vf::PlanOptions options;
  options.bookend = o.bookend;
  options.elide_round_trips = !o.keep_round_trips;
  options.deterministic_scatters = o.deterministic;
  options.matmul_epilogues = !o.no_epilogues;
  options.column_chunks = o.column_chunks;
  return options;
}

int run_command(const RunOptions& o) {
  auto fusion = std::make_shared<vf::Fusion>(vf::read_trace_file(o.trace));
  const vf::Device device = o.device == "cuda" ? vf::Device::Cuda : vf::Device::Cpu;
  std::vector<vf::HostArg> host_args = vf::random_inputs(*fusion, o.seed);
  vf::ExecutorOptions options{.device = device, .plan = plan_options(o)};
  vf::CompiledFusion compiled(fusion, options, vf::tool::make_backend(device));
  std::vector<vf::Arg> args = vf::tool::upload(host_args, device);
  vf::ExecutionStats stats;
  std::vector<vf::Tensor> outputs = compiled.run(args, &stats);
  std::vector<vf::HostTensor> results = vf::tool::download(outputs);

  std::vector<vf::HostTensor> expected;
  if (o.check) expected = vf::run_reference(*fusion, host_args);
  bool ok = true;
  double worst = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const vf::Value* v = fusion->outputs()[i];
    std::printf("%-10s %-8s %-22s checksum %.6g", v->name.c_str(), std::string(dtype_short_name(v->dtype)).c_str(),
                vf::shape_to_string(v->shape).c_str(), vf::tensor_checksum(results[i]));
    if (o.check) {
      vf::Comparison c = vf::compare_tensors(results[i], expected[i], vf::output_tolerance(v));
      worst = std::max(worst, c.max_abs_error);
      std::printf("  max error %.3g%s", c.max_abs_error, c.ok ? "" : "  MISMATCH");
      if (!c.ok) {
        ok = false;
        std::fprintf(stderr, "%s: error: output '%s' differs from the reference: %lld mismatches, first %s\n",
                     o.trace.c_str(), v->name.c_str(), static_cast<long long>(c.mismatches), c.first_mismatch.c_str());
      }
    }
    std::printf("\n");
  }
  std::printf("%d kernel launch(es), %lld bytes allocated, peak %lld bytes, device %s%s\n", stats.kernels_launched,
              static_cast<long long>(stats.allocated_bytes), static_cast<long long>(stats.peak_bytes),
              vf::device_name(device), o.bookend ? ", bookend on" : "");
  if (o.check) std::printf("check: %s (largest error %.3g)\n", ok ? "ok" : "MISMATCH", worst);
  return ok ? kExitOk : kExitMismatch;
}

// Plans for contiguous inputs; an internal error carries a repro file (runtime/repro.h).
vf::Plan plan_with_repro(const vf::Fusion& fusion, const vf::PlanOptions& options) {
  const std::vector<vf::Layout> layouts = vf::contiguous_input_layouts(fusion);
  try {
    return vf::plan_fusion(fusion, layouts, options);
  } catch (const vf::InternalError& e) {
    vf::rethrow_with_repro(e, fusion, layouts);
  }
}

int explain_command(const RunOptions& o) {
  vf::Fusion fusion = vf::read_trace_file(o.trace);
  vf::Plan plan = plan_with_repro(fusion, plan_options(o));
  if (o.json)
    std::cout << vf::explain_json(fusion, plan).dump(2) << "\n";
  else
    std::cout << vf::explain_text(fusion, plan);
  return kExitOk;
}

int codegen_command(const RunOptions& o) {
  vf::Fusion fusion = vf::read_trace_file(o.trace);
  vf::Plan plan = plan_with_repro(fusion, plan_options(o));
  const vf::Target target = o.target == "cuda" ? vf::Target::Cuda : vf::Target::Cpu;
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    const vf::Segment& s = plan.segments[i];
    if (s.kind != vf::SegmentKind::Kernel) continue;
    std::cout << "// ---- segment #" << i << " ----\n";
    if (o.kernel_ir) {
      const vf::KernelIR ir = vf::rewrite_kernel_ir(*s.kernel);
      std::cout << vf::print_kernel_ir(ir) << vf::print_schedule(ir, vf::schedule_kernel(s.spec, ir, target)) << "\n";
    }
    else
      std::cout << vf::tool::kernel_source(s.spec, *s.kernel, target, o.specialize ? o.sm_count : 0) << "\n";
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"viewfuse: a fusion compiler that keeps view ops inside the fusion"};
  app.require_subcommand(1);
  RunOptions o;

  CLI::App* run = app.add_subcommand("run", "Run a trace on seeded random inputs and print its outputs");
  run->add_option("trace", o.trace, "Thunder trace file")->required();
  run->add_option("--device", o.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  run->add_flag("--check", o.check, "Compare every output with the reference executor");
  run->add_option("--seed", o.seed, "Seed of the random inputs");
  run->add_flag("--bookend", o.bookend, "Peel leading and trailing view ops (Thunder's old strategy)");
  const char* keep_help = "Round where the trace casts a float value to bf16 or f16 and back (default: keep the float)";
  run->add_flag("--keep-round-trips", o.keep_round_trips, keep_help);
  const char* deterministic_help = "Scatters add in the index's order on CUDA too (reproducible float sums)";
  run->add_flag("--deterministic", o.deterministic, deterministic_help);
  const char* epilogue_help = "Compute a matmul's gelu in a kernel after the call, not in its epilogue";
  run->add_flag("--no-epilogues", o.no_epilogues, epilogue_help);
  const char* chunks_help = "Cut a column reduction into at least this many chunks of rows (default 512)";
  run->add_option("--column-chunks", o.column_chunks, chunks_help)->check(CLI::PositiveNumber);

  CLI::App* explain = app.add_subcommand("explain", "Print the plan: segments, view-op decisions, bytes");
  explain->add_option("trace", o.trace, "Thunder trace file")->required();
  explain->add_flag("--json", o.json, "Print one JSON object");
  explain->add_flag("--bookend", o.bookend, "Plan with bookend");
  explain->add_flag("--keep-round-trips", o.keep_round_trips, keep_help);
  explain->add_flag("--deterministic", o.deterministic, deterministic_help);
  explain->add_flag("--no-epilogues", o.no_epilogues, epilogue_help);
  explain->add_option("--column-chunks", o.column_chunks, chunks_help)->check(CLI::PositiveNumber);

  CLI::App* codegen = app.add_subcommand("codegen", "Print the generated kernels");
  codegen->add_option("trace", o.trace, "Thunder trace file")->required();
  codegen->add_option("--target", o.target, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  codegen->add_flag("--bookend", o.bookend, "Plan with bookend");
  codegen->add_flag("--keep-round-trips", o.keep_round_trips, keep_help);
  codegen->add_flag("--deterministic", o.deterministic, deterministic_help);
  codegen->add_flag("--no-epilogues", o.no_epilogues, epilogue_help);
  codegen->add_option("--column-chunks", o.column_chunks, chunks_help)->check(CLI::PositiveNumber);
  codegen->add_flag("--specialize", o.specialize,
                    "Print the kernels specialized to the trace's sizes, as a run makes them for launches it repeats");
  codegen->add_flag("--kernel-ir", o.kernel_ir,
                    "Print each kernel's IR and the target's schedule of it instead of its source")
      ->excludes(codegen->get_option("--specialize"));
  codegen->add_option("--sm-count", o.sm_count, "Multiprocessors of the device --specialize assumes (an H200's: 132)")
      ->check(CLI::Range(1, 1024));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (*run) return run_command(o);
    if (*explain) return explain_command(o);
    return codegen_command(o);
  } catch (const vf::TraceError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const vf::UserError& e) {
    std::fprintf(stderr, "%s: error: %s\n", o.trace.c_str(), e.what());
    return kExitBadInput;
  } catch (const vf::DeviceError& e) {
    std::fprintf(stderr, "%s: error: %s\n", o.trace.c_str(), e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {  // an InternalError (with its repro path) or a bug outside the error model
    std::fprintf(stderr, "%s: %s\n", o.trace.c_str(), e.what());
    return 3;
  }
}
