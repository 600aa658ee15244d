// vf_dump_kernel_sources: every kernel a trace or random fusion plans to, as text to compare between
// two builds (tools/compare_kernel_sources.py). For each plan (bookend off and on): the explain text,
// then per kernel segment its CPU, CUDA and CUDA-specialized (132 multiprocessors) source, argument
// block and launch shape. Uses only interfaces that older commits have too, so that the same file
// builds against a base commit.
//   vf_dump_kernel_sources traces FILE...          (repro files' `# layout` lines are honoured)
//   vf_dump_kernel_sources random SEED COUNT [long|short] [MAX_OPS] [REDUCTIONS 0|1]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "codegen/generate_kernel.h"
#include "codegen/specialize_kernel.h"
#include "frontend/trace_reader.h"
#include "random_fusion.h"
#include "runtime/repro.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"

namespace {

using namespace vf;

void dump_kernel(const KernelSpec& spec, int variant, std::ostream& out) {
  GeneratedKernel k = generate_kernel(spec, variant == 0 ? Target::Cpu : Target::Cuda);
  if (variant == 2) k = specialize_for_spec(k, spec, 132);
  out << k.source << "abi size " << k.abi.size << " block " << k.abi.block_size << " blocks/sm " << k.abi.blocks_per_sm
      << " index32 " << k.abi.index32 << "\n";
  for (const AbiNest& n : k.abi.nests)
    out << "nest output " << n.output << " rows " << n.rows << " inner " << n.inner << " team " << n.team << " grain "
        << n.grain << "\n";
  for (const AbiField& f : k.abi.fields)
    out << "field " << int(f.kind) << " " << int(f.type) << " " << f.a << " " << f.b << " " << f.value << " @" << f.offset
        << "\n";
}

void dump(const Fusion& f, const std::vector<Layout>& layouts, const std::string& name, std::ostream& out) {
  for (bool bookend : {false, true}) {
    const std::string head = "==== " + name + " bookend=" + std::to_string(bookend);
    PlanOptions options;
    options.bookend = bookend;
    Plan plan;
    try {
      plan = plan_fusion(f, layouts, options);
    } catch (const std::exception& e) {
      out << head << " plan error\n" << e.what() << "\n";
      continue;
    }
    out << head << " plan\n" << explain_text(f, plan);
    for (size_t i = 0; i < plan.segments.size(); ++i) {
      if (plan.segments[i].kind != SegmentKind::Kernel) continue;
      for (int variant = 0; variant < 3; ++variant) {
        out << head << " segment " << i << (variant == 0 ? " cpu" : variant == 1 ? " cuda" : " cuda-specialized") << "\n";
        try {
          dump_kernel(plan.segments[i].spec, variant, out);
        } catch (const std::exception& e) {
          out << "error " << e.what() << "\n";
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "traces") {
    for (int i = 2; i < argc; ++i) {
      std::ifstream in(argv[i]);
      std::stringstream text;
      text << in.rdbuf();
      const Fusion f = read_trace(text.str(), argv[i]);
      dump(f, read_repro_layouts(text.str(), f), argv[i], std::cout);
    }
    return 0;
  }
  if (mode != "random" || argc < 4) {
    std::fprintf(stderr, "usage: %s traces FILE... | random SEED COUNT [long|short] [MAX_OPS] [REDUCTIONS]\n", argv[0]);
    return 2;
  }
  const uint64_t seed = std::stoull(argv[2]);
  const int count = std::stoi(argv[3]);
  fuzz::GeneratorOptions options;
  options.long_rows = argc > 4 && std::string(argv[4]) == "long";
  if (argc > 5) options.max_ops = std::stoi(argv[5]);
  if (argc > 6) options.reductions = std::string(argv[6]) == "1";
  for (int i = 0; i < count; ++i) {
    const fuzz::FuzzProgram p = fuzz::generate_program(seed + i, options);
    std::shared_ptr<Fusion> f;
    try {
      f = fuzz::build_fusion(p);
    } catch (const std::exception&) {
      std::cout << "==== random " << seed + i << " invalid\n";
      continue;
    }
    std::vector<Layout> layouts;
    for (const fuzz::FuzzInput& in : p.inputs) layouts.push_back(fuzz::input_layout(in));
    dump(*f, layouts, "random " + std::to_string(seed + i), std::cout);
  }
  return 0;
}
