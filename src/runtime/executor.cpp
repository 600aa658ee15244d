#include "runtime/executor.h"

#include <algorithm>

#include "base/error.h"
#include "ir/check_input.h"
#include "reference/reference_executor.h"
#include "runtime/cuda_memory.h"
#include "segment/plan_fusion.h"

namespace vf {

// A plan for one input-layout signature, with its kernels compiled and everything a run would
// otherwise search for worked out: a run only follows indices.
struct CompiledFusion::Prepared {
  struct Step {
    std::shared_ptr<const PreparedKernel> kernel;  // null for alias and host segments
    std::vector<int> arg_of_input;  // per segment input: its position in the arguments, or -1
    std::vector<int> dead_values;   // value ids whose buffers die after this segment
    int64_t dead_bytes = 0;
  };
  std::vector<int64_t> signature;  // per tensor input: strides and offset (sizes are fixed)
  Plan plan;
  std::vector<Step> steps;  // per segment
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

// Buffers this execution allocates, counted as they live and die.
class Allocations {
 public:
  explicit Allocations(Device device) : device_(device) {}
  Tensor allocate(DType dtype, const Layout& layout, int64_t bytes) {
    stats_.allocated_bytes += bytes;
    live_ += bytes;
    stats_.peak_bytes = std::max(stats_.peak_bytes, live_);
    return allocate_tensor(device_, dtype, layout, bytes);
  }
  void release(int64_t bytes) { live_ -= bytes; }
  ExecutionStats& stats() { return stats_; }

 private:
  Device device_;
  ExecutionStats stats_;
  int64_t live_ = 0;
};

// Runs a segment through the reference executor, wherever its buffers are.
void run_on_host(const Segment& seg, const std::vector<int>& arg_of_input, const std::vector<Tensor>& slots,
                 const std::vector<Tensor>& outs, const std::vector<Arg>& args) {
  std::vector<HostArg> inputs;
  for (size_t k = 0; k < seg.inputs.size(); ++k) {
    const Value* v = seg.inputs[k];
    if (v->is_tensor)
      inputs.push_back(host_copy(slots[v->id]));
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

}  // namespace

CompiledFusion::CompiledFusion(std::shared_ptr<const Fusion> fusion, ExecutorOptions options,
                               std::shared_ptr<Backend> backend)
    : fusion_(std::move(fusion)), options_(options), backend_(std::move(backend)) {}

CompiledFusion::~CompiledFusion() = default;

const CompiledFusion::Prepared& CompiledFusion::prepare(const std::vector<Arg>& args) {
  check_args(*fusion_, args, options_.device);
  std::vector<int64_t> sig = layout_signature(args);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& p : plans_)
    if (p->signature == sig) return *p;
  auto p = std::make_unique<Prepared>();
  p->signature = std::move(sig);
  std::vector<Layout> layouts;
  for (const Arg& a : args) layouts.push_back(std::holds_alternative<Tensor>(a) ? std::get<Tensor>(a).layout : Layout{});
  PlanOptions plan_options;
  plan_options.bookend = options_.bookend;
  p->plan = plan_fusion(*fusion_, layouts, plan_options);
  const Plan& plan = p->plan;
  const auto& inputs = fusion_->inputs();
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& seg = plan.segments[s];
    Prepared::Step step;
    if (seg.kind == SegmentKind::Kernel && backend_) step.kernel = backend_->prepare(seg.spec);
    for (const Value* v : seg.inputs) {
      auto it = std::find(inputs.begin(), inputs.end(), v);
      step.arg_of_input.push_back(v->is_tensor || it == inputs.end() ? -1 : static_cast<int>(it - inputs.begin()));
    }
    for (const BufferPlan& b : plan.buffers) {
      if (b.last_use != static_cast<int>(s)) continue;
      step.dead_bytes += b.bytes;
      for (const auto& v : fusion_->values())
        if (plan.placement[v->id].storage == b.value) step.dead_values.push_back(v->id);
    }
    p->steps.push_back(std::move(step));
  }
  plans_.push_back(std::move(p));
  return *plans_.back();
}

const Plan& CompiledFusion::plan_for(const std::vector<Arg>& args) { return prepare(args).plan; }

std::vector<Tensor> CompiledFusion::run(const std::vector<Arg>& args, ExecutionStats* stats) {
  const Prepared& prepared = prepare(args);
  const Plan& plan = prepared.plan;
  Allocations alloc(options_.device);
  std::vector<Tensor> slots(fusion_->values().size());
  for (size_t i = 0; i < args.size(); ++i)
    if (const Tensor* t = std::get_if<Tensor>(&args[i])) slots[fusion_->inputs()[i]->id] = *t;

  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& seg = plan.segments[s];
    const Prepared::Step& step = prepared.steps[s];
    if (seg.kind == SegmentKind::Alias) {
      for (const Value* v : seg.views) {
        const Placement& p = plan.placement[v->id];
        if (p.storage == v) {
          slots[v->id] = alloc.allocate(v->dtype, p.layout, 0);  // an empty value
          continue;
        }
        Tensor view = slots[p.storage->id];
        view.layout = p.layout;
        slots[v->id] = std::move(view);
      }
      continue;
    }
    std::vector<Tensor> outs;
    for (size_t k = 0; k < seg.outputs.size(); ++k) {
      const Value* v = seg.outputs[k];
      const Layout& l = seg.spec.output_layouts[k];
      outs.push_back(alloc.allocate(v->dtype, l, l.storage_extent() * dtype_size(v->dtype)));
      slots[v->id] = outs.back();
    }
    if (step.kernel) {
      std::vector<KernelBuffer> in_bufs, out_bufs;
      std::vector<Scalar> scalars(seg.inputs.size());
      for (size_t k = 0; k < seg.inputs.size(); ++k) {
        const Value* v = seg.inputs[k];
        in_bufs.push_back(v->is_tensor ? KernelBuffer{slots[v->id].data, &seg.spec.input_layouts[k]} : KernelBuffer{});
        if (!v->is_tensor) scalars[k] = std::get<Scalar>(args[step.arg_of_input[k]]);
      }
      for (size_t k = 0; k < outs.size(); ++k) out_bufs.push_back({outs[k].data, &seg.spec.output_layouts[k]});
      step.kernel->launch(KernelArgs{in_bufs, scalars, out_bufs, nullptr});
    } else {
      run_on_host(seg, step.arg_of_input, slots, outs, args);
    }
    if (seg.kind == SegmentKind::Kernel) ++alloc.stats().kernels_launched;
    // Buffers read for the last time here die now (their slots and every view of them).
    for (int id : step.dead_values) slots[id] = Tensor{};
    alloc.release(step.dead_bytes);
  }
  std::vector<Tensor> outputs;
  for (const OutputPlan& o : plan.outputs) {
    Tensor t = slots[o.value->id];
    VF_INTERNAL_CHECK(t.defined(), "output ", o.value->name, " was not produced");
    outputs.push_back(std::move(t));
  }
  if (stats) *stats = alloc.stats();
  return outputs;
}

}  // namespace vf
