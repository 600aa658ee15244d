// Execution plans: the segments, buffers and output layouts of one fusion for one set of input
// layouts. A plan is pure data; the executor (runtime/executor.h) carries it out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"
#include "ir/ir.h"
#include "layout/layout.h"
#include "passes/split_column_reductions.h"

namespace vf {

enum class SegmentKind {
  Alias,   // view ops evaluated on the host as layout arithmetic: no kernel, no allocation
  Kernel,  // one generated kernel: compute with the view ops between computations as index math
  Host,    // computed by the reference executor (ops no backend generates yet, e.g. reductions)
  // A library call computing one contraction (a matmul) from placed operands, each read with its
  // layout: cuBLASLt on CUDA (the host's loop through copies where it cannot be loaded or an
  // operand is neither row- nor column-major), the reference executor's loop on the CPU.
  Library,
};
const char* segment_kind_name(SegmentKind kind);  // "alias", "kernel", "host", "library"

// What became of one view op.
enum class ViewDecision {
  Alias,  // its result is returned as a view of an existing buffer
  Index,  // it is index arithmetic inside a kernel; its result is never written to memory
  Copy,   // its result is written to a new buffer
};
const char* view_decision_name(ViewDecision d);  // "alias", "index", "copy"

struct ViewOpPlan {
  const Node* node = nullptr;
  ViewDecision decision = ViewDecision::Index;
  std::string reason;
};

// Where a tensor value lives at run time: in the storage of `storage` (a fusion input or a value
// written to a buffer) with `layout`. Values that are never materialised have storage == null.
struct Placement {
  const Value* storage = nullptr;
  Layout layout;
};

struct Segment {
  SegmentKind kind = SegmentKind::Alias;
  std::vector<const Node*> nodes;  // the original nodes it evaluates, in program order
  // Alias segments: the values they materialise as views (placements in Plan::placement).
  std::vector<const Value*> views;
  // Kernel and host segments: the segment as a fusion of its own, and how it maps to the original.
  std::shared_ptr<const Fusion> fusion;
  std::vector<const Value*> inputs;   // original values for fusion->inputs(), in order
  std::vector<const Value*> outputs;  // original values for fusion->outputs(): buffers it writes
  KernelSpec spec;                    // fusion plus the layouts of its inputs and outputs
  // Kernel segments: the segment lowered to the kernel IR (codegen/lower_kernel.h), which the
  // backends schedule and emit.
  std::shared_ptr<const KernelIR> kernel;
  int64_t bytes_read = 0;     // each element of each input buffer read once
  int64_t bytes_written = 0;  // the buffers it writes
  std::string note;           // why the planner made it (e.g. a split of a fused part)
};

// One allocation.
struct BufferPlan {
  const Value* value = nullptr;  // the value written into it
  int64_t bytes = 0;
  int producer = 0;   // index of the segment that writes it
  int last_use = 0;   // index of the last segment that reads it; segments.size() if it outlives
                      // the execution (an output, or the storage of one)
};

struct OutputPlan {
  const Value* value = nullptr;
  const Value* alias_of = nullptr;  // the input or output whose storage it shares; null if its own
  Layout layout;
};

struct PlanOptions {
  bool bookend = false;              // peel leading and trailing view chains (passes/bookend.h)
  bool reductions_in_kernels = true;  // false: segments with reductions run on the host (reference)
  bool split_reductions = true;      // two stages for few long rows (passes/split_reductions.h)
  // Keep the float32 value where a region rounds it to bf16 or f16 and widens it straight back
  // (passes/elide_round_trip_casts.h); false rounds as the program says, as the reference does.
  bool elide_round_trips = true;
  // Scatters add in the index's row-major order on CUDA too (a thread walks the scatter dim for
  // each position of the other dims), so float sums are the CPU's and the reference's bit for bit
  // and repeat from run to run; false: CUDA adds with atomics in any order (codegen/kernel_ir.h).
  bool deterministic_scatters = false;
  // Scatters of few rows into many (an embedding's gradient) add into a row per token, read back
  // at the rows the ids name (passes/compact_row_scatters.h); false: into the whole table. The
  // schedule switch "compact" (codegen/schedule_cuda.h) turns it off too, for measurements.
  bool compact_scatters = true;
  // Fold the tanh gelu of a matmul's result into the library call's epilogue
  // (passes/fuse_matmul_epilogues.h); false computes it in a kernel after the call.
  bool matmul_epilogues = true;
  // The chunks a column reduction is cut into, at least (passes/split_column_reductions.h): teams
  // enough to keep the GPU's loads in flight; more chunks write more partials.
  int64_t column_chunks = kColumnChunks;
};

struct Plan {
  PlanOptions options;  // what it was planned with
  // The fusion planned, when planning rewrote the one given (split reductions); every Value and
  // Node of the plan is then one of its own. Its inputs and outputs match the given fusion's.
  std::shared_ptr<const Fusion> rewritten;
  // The fusion as given, where the caller shares it (the executor does): a copy of the plan then
  // keeps every Node and Value it points to alive, after the CompiledFusion that made it is gone.
  std::shared_ptr<const Fusion> source;
  std::vector<std::string> rewrites;  // what was rewritten, a line each
  std::vector<Segment> segments;
  std::vector<BufferPlan> buffers;
  std::vector<OutputPlan> outputs;
  std::vector<ViewOpPlan> view_ops;  // one per view op of the fusion, in program order
  std::vector<Placement> placement;  // indexed by Value::id
  int64_t allocated_bytes = 0;
  int64_t peak_bytes = 0;

  int kernel_count() const;  // launches of one execution
  // The fusion the plan's values belong to: `rewritten`, or the one that was planned as given.
  const Fusion& planned(const Fusion& given) const { return rewritten ? *rewritten : given; }
};

}  // namespace vf
