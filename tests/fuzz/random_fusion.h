// Random fusions for differential testing: seeded programs over every op family, with inputs of
// random layouts, built into a vf::Fusion and printed as a repro trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "layout/layout.h"
#include "reference/reference_executor.h"

namespace vf::fuzz {

// How an input's layout is derived from its shape, so that shrinking a size keeps the pattern.
struct LayoutRecipe {
  std::vector<int> order;         // physical order, outermost first (a permutation of the dims)
  std::vector<int> gap;           // per dim: extra elements between consecutive rows of that dim
  std::vector<bool> expanded;     // per dim: stride 0 (only applied to dims of size > 1)
  std::vector<int64_t> one_stride;  // per dim: the stride given to a dim of size 1
  int64_t offset = 0;
};

struct FuzzInput {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  LayoutRecipe recipe;
};

// An operand: a value (inputs first, then each op's results in order) or a literal number.
struct FuzzOperand {
  int value = -1;  // >= 0: a value index
  Scalar literal;  // used when value < 0
};

struct FuzzOp {
  OpKind op = OpKind::Add;
  std::vector<FuzzOperand> operands;
  OpAttrs attrs;
};

struct FuzzProgram {
  uint64_t seed = 0;  // of the generator; also seeds the input values
  std::vector<FuzzInput> inputs;
  std::vector<FuzzOp> ops;
  std::vector<int> outputs;  // value indices

  int num_values() const;  // inputs plus every op result
};

struct GeneratorOptions {
  int max_ops = 12;
  int max_inputs = 3;
  int max_rank = 4;
  int max_dim = 6;  // most sizes; a few dims are larger so that kernels split across threads
  bool reductions = true;
  // The first input's shape has a dim of tens of thousands (a multiple of 4096): reductions of it
  // have few long rows, which planning splits in two stages (passes/split_reductions.h).
  bool long_rows = false;
};

// A valid program (it builds and the reference runs it) from `seed`; the same seed gives the same
// program.
FuzzProgram generate_program(uint64_t seed, const GeneratorOptions& options = {});

// The input's layout for its shape (sizes == shape).
Layout input_layout(const FuzzInput& input);

// Builds the program; throws UserError when an op's arguments do not fit (a shrunk program may not).
std::shared_ptr<Fusion> build_fusion(const FuzzProgram& program);

// Input `index` of a run seeded with `seed`: random values (reference/random_inputs.h) over the
// whole buffer that `layout` addresses, so that gaps and expanded dims hold values too.
HostTensor input_tensor(DType dtype, const Layout& layout, uint64_t seed, size_t index);
// The inputs of the program, with its layouts and values seeded by program.seed.
std::vector<HostArg> make_inputs(const FuzzProgram& program);

// The program as a repro trace (runtime/repro.h): the trace plus a comment block with the layouts.
std::string program_text(const FuzzProgram& program, const std::string& note);

}  // namespace vf::fuzz
