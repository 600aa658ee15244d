#include "runtime/executor.h"

#include <algorithm>

#include "base/error.h"
#include "reference/reference_executor.h"
#include "runtime/cuda_memory.h"
#include "segment/plan_fusion.h"

namespace vf {

// A plan for one input-layout signature, with its kernels compiled.
struct CompiledFusion::Prepared {
  std::vector<int64_t> signature;  // per tensor input: strides and offset (sizes are fixed)
  Plan plan;
  std::vector<std::shared_ptr<const PreparedKernel>> kernels;  // per segment; null if none
};

namespace {

void check_args(const Fusion& fusion, const std::vector<Arg>& args, Device device) {
  VF_USER_CHECK(args.size() == fusion.inputs().size(), "the fusion takes ", fusion.inputs().size(),
                " argument(s), got ", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* in = fusion.inputs()[i];
    if (in->is_tensor) {
      const Tensor* t = std::get_if<Tensor>(&args[i]);
      VF_USER_CHECK(t, "input '", in->name, "' expects a tensor ", in->type_string(), ", got a number");
      VF_USER_CHECK(t->dtype == in->dtype && t->shape() == in->shape, "input '", in->name, "' expects ",
                    in->type_string(), ", got ", dtype_short_name(t->dtype), shape_to_string(t->shape()));
      VF_USER_CHECK(t->device == device, "input '", in->name, "' is on ", device_name(t->device),
                    ", but the fusion runs on ", device_name(device));
      VF_USER_CHECK(t->layout.strides.size() == t->layout.sizes.size(), "input '", in->name,
                    "' has ", t->layout.strides.size(), " strides for rank ", t->layout.rank());
      if (t->layout.numel() > 0)
        VF_USER_CHECK(t->layout.storage_extent() * dtype_size(t->dtype) <= t->buffer_bytes, "input '",
                      in->name, "' with ", t->layout.to_string(), " reaches past its buffer of ",
                      t->buffer_bytes, " bytes");
    } else {
      const Scalar* s = std::get_if<Scalar>(&args[i]);
      VF_USER_CHECK(s, "input '", in->name, "' expects a number (", in->type_string(), "), got a tensor");
      VF_USER_CHECK(s->kind <= in->scalar_kind, "input '", in->name, "' expects a number of kind ", in->type_string(),
                    ", got a ", scalar_kind_name(s->kind));
    }
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

// Buffers this execution allocates, with their real sizes counted as they live and die.
class Allocations {
 public:
  explicit Allocations(Device device) : device_(device) {}
  Tensor allocate(DType dtype, const Layout& layout, int64_t bytes) {
    stats_.allocated_bytes += bytes;
    live_ += bytes;
    stats_.peak_bytes = std::max(stats_.peak_bytes, live_);
    if (device_ == Device::Cuda) {
      std::byte* data = static_cast<std::byte*>(cuda_alloc(bytes));
      std::shared_ptr<void> owner(data, [bytes](void* p) { cuda_free(p, bytes); });
      return Tensor{dtype, layout, device_, std::move(owner), data, bytes};
    }
    auto storage = std::make_shared<Storage>(bytes);
    return Tensor{dtype, layout, device_, storage, storage->data(), bytes};
  }
  void release(int64_t bytes) { live_ -= bytes; }
  ExecutionStats& stats() { return stats_; }

 private:
  Device device_;
  ExecutionStats stats_;
  int64_t live_ = 0;
};

// A device tensor's whole buffer copied to the host, with the same layout.
HostTensor download_buffer(const Tensor& t) {
  if (t.device == Device::Cpu) return as_host_tensor(t);
  auto storage = std::make_shared<Storage>(t.buffer_bytes);
  cuda_copy_to_host(storage->data(), t.data, t.buffer_bytes);
  return HostTensor::view_of(t.dtype, t.layout, std::move(storage));
}

// Runs a segment through the reference executor, wherever its buffers are.
void run_on_host(const Segment& seg, std::vector<Tensor>& slots, const std::vector<Tensor>& outs,
                 const std::vector<Arg>& args, const Fusion& fusion) {
  std::vector<HostArg> inputs;
  for (const Value* v : seg.inputs) {
    if (v->is_tensor) {
      inputs.push_back(download_buffer(slots[v->id]));
      continue;
    }
    auto it = std::find(fusion.inputs().begin(), fusion.inputs().end(), v);
    VF_INTERNAL_CHECK(it != fusion.inputs().end(), "scalar ", v->name, " is not a fusion input");
    inputs.push_back(std::get<Scalar>(args[it - fusion.inputs().begin()]));
  }
  std::vector<HostTensor> results = run_reference(*seg.fusion, inputs);
  for (size_t i = 0; i < results.size(); ++i) {
    if (outs[i].device == Device::Cpu) {
      copy_elements(results[i], as_host_tensor(outs[i]));
      continue;
    }
    auto staging = std::make_shared<Storage>(outs[i].buffer_bytes);
    copy_elements(results[i], HostTensor::view_of(outs[i].dtype, outs[i].layout, staging));
    cuda_copy_to_device(outs[i].data, staging->data(), outs[i].buffer_bytes);
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
  for (const Segment& seg : p->plan.segments)
    p->kernels.push_back(seg.kind == SegmentKind::Kernel && backend_ ? backend_->prepare(seg.spec) : nullptr);
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

  std::vector<const BufferPlan*> dying;
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& seg = plan.segments[s];
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
    if (const auto& kernel = prepared.kernels[s]) {
      std::vector<KernelBuffer> in_bufs, out_bufs;
      std::vector<Scalar> scalars;
      for (size_t k = 0; k < seg.inputs.size(); ++k) {
        const Value* v = seg.inputs[k];
        in_bufs.push_back(v->is_tensor ? KernelBuffer{slots[v->id].data, &seg.spec.input_layouts[k]} : KernelBuffer{});
        Scalar sc;
        if (!v->is_tensor) {
          auto it = std::find(fusion_->inputs().begin(), fusion_->inputs().end(), v);
          sc = std::get<Scalar>(args[it - fusion_->inputs().begin()]);
        }
        scalars.push_back(sc);
      }
      for (size_t k = 0; k < outs.size(); ++k) out_bufs.push_back({outs[k].data, &seg.spec.output_layouts[k]});
      kernel->launch(KernelArgs{in_bufs, scalars, out_bufs, nullptr});
    } else {
      run_on_host(seg, slots, outs, args, *fusion_);
    }
    if (seg.kind == SegmentKind::Kernel) ++alloc.stats().kernels_launched;
    // Buffers read for the last time here die now (their slots and every view of them).
    for (const BufferPlan& b : plan.buffers) {
      if (b.last_use != static_cast<int>(s)) continue;
      for (const auto& v : fusion_->values())
        if (plan.placement[v->id].storage == b.value) slots[v->id] = Tensor{};
      alloc.release(b.bytes);
    }
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
