#include "runtime/executor.h"

#include <algorithm>
#include <future>
#include <optional>
#include <thread>

#include "base/error.h"
#include "ir/check_input.h"
#include "reference/reference_executor.h"
#include "runtime/cublas_lt.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/repro.h"
#include "segment/plan_fusion.h"

namespace vf {

namespace {

// Where a value of one run lives: a buffer's address and size, the value's layout (the argument's,
// or one the plan holds) and the owner that keeps the buffer alive (an argument's, or one in
// RunScratch::owners).
struct RunSlot {
  std::byte* data = nullptr;
  int64_t bytes = 0;
  const Layout* layout = nullptr;  // null: not produced (yet)
  const std::shared_ptr<void>* owner = nullptr;
  DType dtype = DType::Float32;
};

// The working memory of one run, sized for one plan: nothing in it is allocated on a cache hit.
struct RunScratch {
  std::vector<RunSlot> slots;                  // per value id
  std::vector<std::shared_ptr<void>> owners;   // per value id: buffers this run allocated
  std::vector<KernelBuffer> in_bufs, out_bufs;  // one launch's buffers, sized for the largest segment
  std::vector<Scalar> scalars;
  void clear() {
    std::fill(slots.begin(), slots.end(), RunSlot{});
    for (auto& o : owners) o.reset();
  }
};

// Scratches free for the next run of one plan; one is created when every other is in use, so
// there are as many as runs of that plan have ever been in flight at once.
class ScratchPool {
 public:
  // A free scratch, or null when there is none.
  std::unique_ptr<RunScratch> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      free_.reserve(++created_);  // so that give() never allocates
      return nullptr;
    }
    std::unique_ptr<RunScratch> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give(std::unique_ptr<RunScratch> s) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(s));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<RunScratch>> free_;
  size_t created_ = 0;
};

}  // namespace

// A plan for one input-layout signature, with its kernels compiled and everything a run would
// otherwise search for worked out: a run only follows indices.
struct CompiledFusion::Prepared {
  struct Step {
    std::shared_ptr<const PreparedKernel> kernel;  // null for alias, host and library segments
    // A library segment on CUDA with cuBLASLt: its call, made ready (else it runs on the host).
    std::unique_ptr<const CublasLtMatmul> gemm;
    std::vector<int> arg_of_input;  // per segment input: its position in the arguments, or -1
    std::vector<int> dead_values;   // value ids whose buffers die after this segment
    int64_t dead_bytes = 0;
  };
  std::vector<int64_t> signature;  // per tensor input: strides and offset (sizes are fixed)
  Plan plan;
  std::vector<Step> steps;  // per segment
  size_t max_segment_inputs = 0, max_segment_outputs = 0;
  mutable ScratchPool scratch;  // per-call working memory of run, reused across calls
};

namespace {

void check_args(const Fusion& fusion, const std::vector<Arg>& args, Device device) {
  check_input_count(fusion, args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* in = fusion.inputs()[i];
    const Tensor* t = std::get_if<Tensor>(&args[i]);
    ArgView view;
    view.is_tensor = t != nullptr;
    if (t) {
      view.defined = t->defined();
      view.dtype = t->dtype;
      view.shape = &t->shape();
    } else {
      view.scalar = std::get<Scalar>(args[i]);
    }
    check_input(*in, view);
    if (!t) continue;
    VF_USER_CHECK(t->device == device, "input '", in->name, "' is on ", device_name(t->device),
                  ", but the fusion runs on ", device_name(device));
    VF_USER_CHECK(t->layout.strides.size() == t->layout.sizes.size(), "input '", in->name, "' has ",
                  t->layout.strides.size(), " strides for rank ", t->layout.rank());
    if (t->layout.numel() > 0)
      VF_USER_CHECK(t->layout.storage_extent() * dtype_size(t->dtype) <= t->buffer_bytes, "input '", in->name,
                    "' with ", t->layout.to_string(), " reaches past its buffer of ", t->buffer_bytes, " bytes");
  }
}

std::vector<int64_t> layout_signature(const std::vector<Arg>& args) {
  std::vector<int64_t> sig;
  for (const Arg& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) {
      sig.insert(sig.end(), t->layout.strides.begin(), t->layout.strides.end());
      sig.push_back(t->layout.offset);
    }
  return sig;
}

// Whether layout_signature(args) == sig, without building it.
bool signature_matches(const std::vector<int64_t>& sig, const std::vector<Arg>& args) {
  size_t at = 0;
  for (const Arg& a : args) {
    const Tensor* t = std::get_if<Tensor>(&a);
    if (!t) continue;
    const std::vector<int64_t>& strides = t->layout.strides;
    if (sig.size() - at < strides.size() + 1) return false;
    if (!std::equal(strides.begin(), strides.end(), sig.begin() + static_cast<std::ptrdiff_t>(at))) return false;
    at += strides.size();
    if (sig[at++] != t->layout.offset) return false;
  }
  return at == sig.size();
}

// A scratch from the plan's pool for the length of one run, cleared and given back at its end.
class ScratchLease {
 public:
  ScratchLease(ScratchPool& pool, size_t values, size_t max_inputs, size_t max_outputs) : pool_(pool) {
    scratch_ = pool_.take();
    if (!scratch_) {
      scratch_ = std::make_unique<RunScratch>();
      scratch_->slots.resize(values);
      scratch_->owners.resize(values);
      scratch_->in_bufs.resize(max_inputs);
      scratch_->scalars.resize(max_inputs);
      scratch_->out_bufs.resize(max_outputs);
    }
  }
  ~ScratchLease() {
    scratch_->clear();
    pool_.give(std::move(scratch_));
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  RunScratch& operator*() { return *scratch_; }

 private:
  ScratchPool& pool_;
  std::unique_ptr<RunScratch> scratch_;
};

// A runtime tensor of a slot's value (for host segments and the returned outputs).
Tensor slot_tensor(const RunSlot& s, Device device) {
  return Tensor{s.dtype, *s.layout, device, s.owner ? *s.owner : nullptr, s.data, s.bytes};
}

// Buffers this execution allocates, counted as they live and die. The layout is passed to the
// caller's hook; the default allocation leaves the returned tensor's layout empty (a run keeps
// layouts in its slots).
class Allocations {
 public:
  Allocations(Device device, const RunHooks& hooks) : device_(device), hooks_(hooks) {}
  Tensor allocate(DType dtype, const Layout& layout, int64_t bytes) {
    stats_.allocated_bytes += bytes;
    live_ += bytes;
    stats_.peak_bytes = std::max(stats_.peak_bytes, live_);
    if (hooks_.allocate) return hooks_.allocate(dtype, layout, bytes);
    return allocate_tensor(device_, dtype, Layout{}, bytes);
  }
  void release(int64_t bytes) { live_ -= bytes; }
  ExecutionStats& stats() { return stats_; }

 private:
  Device device_;
  const RunHooks& hooks_;
  ExecutionStats stats_;
  int64_t live_ = 0;
};

// Runs a segment through the reference executor, wherever its buffers are.
void run_on_host(const Segment& seg, const std::vector<int>& arg_of_input, const std::vector<RunSlot>& slots,
                 const std::vector<Tensor>& outs, const std::vector<Arg>& args, Device device) {
  std::vector<HostArg> inputs;
  for (size_t k = 0; k < seg.inputs.size(); ++k) {
    const Value* v = seg.inputs[k];
    if (v->is_tensor)
      inputs.push_back(host_copy(slot_tensor(slots[v->id], device)));
    else
      inputs.push_back(std::get<Scalar>(args[arg_of_input[k]]));
  }
  std::vector<HostTensor> results = run_reference(*seg.fusion, inputs);
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor staging = outs[i].device == Device::Cpu
                         ? outs[i]
                         : allocate_tensor(Device::Cpu, outs[i].dtype, outs[i].layout, outs[i].buffer_bytes);
    copy_elements(results[i], as_host_tensor(staging));
    if (outs[i].device == Device::Cuda) cuda_copy_to_device(outs[i].data, staging.data, outs[i].buffer_bytes);
  }
}

// A contraction's addend (matmul_add's c) and bias, null where it has none.
struct GemmInputs {
  const Value* addend = nullptr;
  const Value* bias = nullptr;
};
GemmInputs gemm_inputs(const Node& mm) {
  const ContractionSlots slots = contraction_slots(mm);
  auto input = [&](int i) { return i >= 0 ? mm.inputs[static_cast<size_t>(i)] : nullptr; };
  return {input(slots.addend), input(slots.bias)};
}

// A library segment's cuBLASLt call, or null where the host runs it: an operand (or the result)
// whose matrices are neither row- nor column-major, a bias whose elements are not adjacent, an
// addend not laid out as the result, or an epilogue with an empty K (explain says which; the
// planner passes such operands only when placed). matmul_add's c is cuBLASLt's C (beta = 1);
// matmul_gelu writes its gelu as D and, where it is read, the matmul's result as the aux output.
std::unique_ptr<const CublasLtMatmul> prepare_gemm(const Segment& seg) {
  // The matmul's operands among the segment's inputs (one input when two are one value).
  auto layout_of = [&](const Value* v) -> const Layout& {
    return seg.spec.input_layouts.at(
        static_cast<size_t>(std::find(seg.inputs.begin(), seg.inputs.end(), v) - seg.inputs.begin()));
  };
  const Node& mm = *seg.nodes.at(0);
  const GemmInputs in = gemm_inputs(mm);
  GemmEpilogue epilogue;
  if (in.addend) epilogue.addend = layout_of(in.addend).offset;
  if (in.bias) epilogue.bias = layout_of(in.bias).offset;
  epilogue.gelu = mm.op == OpKind::MatmulGelu;
  epilogue.aux = seg.outputs.size() > 1;
  std::optional<StridedGemm> g =
      strided_gemm(layout_of(mm.inputs[0]), layout_of(mm.inputs[1]), seg.spec.output_layouts.at(0), nullptr);
  if (!g || ((in.addend || in.bias || epilogue.gelu) && g->k == 0)) return nullptr;
  if (in.bias && !gemm_bias_problem(layout_of(in.bias)).empty()) return nullptr;
  if (in.addend && (!gemm_addend_problem(layout_of(in.addend)).empty() || !seg.spec.output_layouts.at(0).is_contiguous()))
    return nullptr;
  if (epilogue.aux && (seg.spec.output_layouts.at(1) != seg.spec.output_layouts.at(0) || g->d.rs % 8 != 0)) return nullptr;
  cuda_make_current(cuda_device());
  return std::make_unique<const CublasLtMatmul>(*g, seg.outputs.at(0)->dtype, epilogue);
}

}  // namespace

CompiledFusion::CompiledFusion(std::shared_ptr<const Fusion> fusion, ExecutorOptions options,
                               std::shared_ptr<Backend> backend)
    : fusion_(std::move(fusion)), options_(options), backend_(std::move(backend)) {}

CompiledFusion::~CompiledFusion() = default;

const CompiledFusion::Prepared& CompiledFusion::prepare(const std::vector<Arg>& args) {
  check_args(*fusion_, args, options_.device);
  if (const Prepared* p = find_prepared(args)) return *p;
  std::lock_guard<std::mutex> one_at_a_time(prepare_mutex_);
  if (const Prepared* p = find_prepared(args)) return *p;
  std::unique_ptr<Prepared> p = build_prepared(args, options_.plan);
  std::unique_lock<std::shared_mutex> lock(plans_mutex_);
  plans_.push_back(std::move(p));
  return *plans_.back();
}

const CompiledFusion::Prepared* CompiledFusion::find_prepared(const std::vector<Arg>& args) const {
  std::shared_lock<std::shared_mutex> lock(plans_mutex_);
  for (const auto& p : plans_)
    if (signature_matches(p->signature, args)) return p.get();
  return nullptr;
}

std::unique_ptr<CompiledFusion::Prepared> CompiledFusion::build_prepared(const std::vector<Arg>& args,
                                                                         const PlanOptions& plan_options) {
  auto p = std::make_unique<Prepared>();
  p->signature = layout_signature(args);
  std::vector<Layout> layouts;
  for (const Arg& a : args) layouts.push_back(std::holds_alternative<Tensor>(a) ? std::get<Tensor>(a).layout : Layout{});
  p->plan = plan_fusion(*fusion_, layouts, plan_options);
  p->plan.source = fusion_;
  const Plan& plan = p->plan;
  const Fusion& planned = plan.planned(*fusion_);  // (the rewritten one, when reductions were split)
  const auto& inputs = planned.inputs();
  p->steps.resize(plan.segments.size());
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& seg = plan.segments[s];
    Prepared::Step& step = p->steps[s];
    for (const Value* v : seg.inputs) {
      auto it = std::find(inputs.begin(), inputs.end(), v);
      step.arg_of_input.push_back(v->is_tensor || it == inputs.end() ? -1 : static_cast<int>(it - inputs.begin()));
    }
    if (seg.kind == SegmentKind::Library && options_.device == Device::Cuda && cublaslt_available()) {
      try {
        step.gemm = prepare_gemm(seg);
      } catch (const DeviceError& e) {
        if (seg.nodes.at(0)->op != OpKind::MatmulGelu) throw;
        // No algorithm for the gelu epilogue here: the gelu goes back to a kernel after the call.
        PlanOptions without = plan_options;
        without.matmul_epilogues = false;
        std::unique_ptr<Prepared> again = build_prepared(args, without);
        again->plan.rewrites.push_back(std::string("planned again without matmul epilogues: ") + e.what());
        return again;
      }
    }
    for (const BufferPlan& b : plan.buffers) {
      if (b.last_use != static_cast<int>(s)) continue;
      step.dead_bytes += b.bytes;
      for (const auto& v : planned.values())
        if (plan.placement[v->id].storage == b.value) step.dead_values.push_back(v->id);
    }
    p->max_segment_inputs = std::max(p->max_segment_inputs, seg.inputs.size());
    p->max_segment_outputs = std::max(p->max_segment_outputs, seg.outputs.size());
  }
  // Kernels compile in parallel (the backends are thread-safe), at most `limit` at once; a plan
  // with one kernel compiles on this thread.
  std::vector<size_t> kernel_segments;
  for (size_t s = 0; s < plan.segments.size(); ++s)
    if (plan.segments[s].kind == SegmentKind::Kernel && backend_) kernel_segments.push_back(s);
  if (kernel_segments.size() == 1) {
    const Segment& seg = plan.segments[kernel_segments[0]];
    p->steps[kernel_segments[0]].kernel = backend_->prepare(seg.spec, *seg.kernel);
  } else if (!kernel_segments.empty()) {
    const size_t limit = std::clamp<size_t>(std::thread::hardware_concurrency(), 2, 8);
    std::vector<std::future<std::shared_ptr<const PreparedKernel>>> compiles(kernel_segments.size());
    // Waits for every compile started, so that none outlives `plan` when one of them throws.
    struct WaitAll {
      std::vector<std::future<std::shared_ptr<const PreparedKernel>>>& futures;
      ~WaitAll() {
        for (auto& f : futures)
          if (f.valid()) f.wait();
      }
    } wait_all{compiles};
    Backend& backend = *backend_;
    for (size_t i = 0; i < kernel_segments.size(); ++i) {
      if (i >= limit) p->steps[kernel_segments[i - limit]].kernel = compiles[i - limit].get();
      const Segment& seg = plan.segments[kernel_segments[i]];
      compiles[i] = std::async(std::launch::async, [&backend, &seg] { return backend.prepare(seg.spec, *seg.kernel); });
    }
    for (size_t i = kernel_segments.size() > limit ? kernel_segments.size() - limit : 0; i < kernel_segments.size(); ++i)
      p->steps[kernel_segments[i]].kernel = compiles[i].get();
  }
  return p;
}

// An internal error escaping planning or a run carries a repro file (runtime/repro.h).
const Plan& CompiledFusion::plan_for(const std::vector<Arg>& args) try {
  return prepare(args).plan;
} catch (const InternalError& e) {
  rethrow_with_repro(e, *fusion_, args);
}

std::vector<Tensor> CompiledFusion::run(const std::vector<Arg>& args, ExecutionStats* stats) {
  return run(args, RunHooks{}, stats);
}

std::vector<Tensor> CompiledFusion::run(const std::vector<Arg>& args, const RunHooks& hooks, ExecutionStats* stats) try {
  const Prepared& prepared = prepare(args);
  const Plan& plan = prepared.plan;
  const Device device = options_.device;
  const Fusion& planned = plan.planned(*fusion_);
  Allocations alloc(device, hooks);
  ScratchLease lease(prepared.scratch, planned.values().size(), prepared.max_segment_inputs,
                     prepared.max_segment_outputs);
  RunScratch& scratch = *lease;
  std::vector<RunSlot>& slots = scratch.slots;
  // A buffer this run allocates for value v, kept alive by scratch.owners[v->id].
  auto allocate = [&](const Value* v, const Layout& layout, int64_t bytes) {
    Tensor t = alloc.allocate(v->dtype, layout, bytes);
    scratch.owners[v->id] = std::move(t.owner);
    slots[v->id] = RunSlot{t.data, t.buffer_bytes, &layout, &scratch.owners[v->id], v->dtype};
  };
  for (size_t i = 0; i < args.size(); ++i)
    if (const Tensor* t = std::get_if<Tensor>(&args[i]))
      slots[planned.inputs()[i]->id] = RunSlot{t->data, t->buffer_bytes, &t->layout, &t->owner, t->dtype};

  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& seg = plan.segments[s];
    const Prepared::Step& step = prepared.steps[s];
    if (seg.kind == SegmentKind::Alias) {
      for (const Value* v : seg.views) {
        const Placement& p = plan.placement[v->id];
        if (p.storage == v) {
          allocate(v, p.layout, 0);  // an empty value
          continue;
        }
        RunSlot view = slots[p.storage->id];
        view.layout = &p.layout;
        slots[v->id] = view;
      }
      continue;
    }
    for (size_t k = 0; k < seg.outputs.size(); ++k) {
      const Value* v = seg.outputs[k];
      const Layout& l = seg.spec.output_layouts[k];
      allocate(v, l, l.storage_extent() * dtype_size(v->dtype));
    }
    if (step.kernel) {
      const size_t n_in = seg.inputs.size(), n_out = seg.outputs.size();
      for (size_t k = 0; k < n_in; ++k) {
        const Value* v = seg.inputs[k];
        scratch.in_bufs[k] = v->is_tensor ? KernelBuffer{slots[v->id].data, &seg.spec.input_layouts[k]} : KernelBuffer{};
        if (!v->is_tensor) scratch.scalars[k] = std::get<Scalar>(args[step.arg_of_input[k]]);
      }
      for (size_t k = 0; k < n_out; ++k)
        scratch.out_bufs[k] = KernelBuffer{slots[seg.outputs[k]->id].data, &seg.spec.output_layouts[k]};
      step.kernel->launch(KernelArgs{std::span<const KernelBuffer>(scratch.in_bufs.data(), n_in),
                                     std::span<const Scalar>(scratch.scalars.data(), n_in),
                                     std::span<const KernelBuffer>(scratch.out_bufs.data(), n_out), hooks.stream});
    } else if (step.gemm) {
      auto pointer = [&](const Value* v) { return v ? reinterpret_cast<CUdeviceptr>(slots[v->id].data) : 0; };
      const Node& mm = *seg.nodes[0];
      const GemmInputs in = gemm_inputs(mm);
      step.gemm->run(GemmPointers{.a = pointer(mm.inputs[0]), .b = pointer(mm.inputs[1]), .addend = pointer(in.addend),
                                  .bias = pointer(in.bias), .d = pointer(seg.outputs[0]),
                                  .aux = seg.outputs.size() > 1 ? pointer(seg.outputs[1]) : 0},
                     static_cast<CUstream>(hooks.stream));
    } else {
      std::vector<Tensor> outs;
      for (const Value* v : seg.outputs) outs.push_back(slot_tensor(slots[v->id], device));
      run_on_host(seg, step.arg_of_input, slots, outs, args, device);
    }
    if (seg.kind == SegmentKind::Kernel) ++alloc.stats().kernels_launched;
    // Buffers read for the last time here die now (their slots and every view of them).
    for (int id : step.dead_values) {
      slots[id] = RunSlot{};
      scratch.owners[id].reset();
    }
    alloc.release(step.dead_bytes);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(plan.outputs.size());
  for (const OutputPlan& o : plan.outputs) {
    const RunSlot& slot = slots[o.value->id];
    VF_INTERNAL_CHECK(slot.layout != nullptr, "output ", o.value->name, " was not produced");
    outputs.push_back(slot_tensor(slot, device));
  }
  if (stats) *stats = alloc.stats();
  return outputs;
} catch (const InternalError& e) {
  rethrow_with_repro(e, *fusion_, args);
}

}  // namespace vf
