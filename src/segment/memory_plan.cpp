#include "segment/memory_plan.h"

#include <algorithm>
#include <unordered_map>

namespace vf {

int Plan::kernel_count() const {
  return static_cast<int>(std::count_if(segments.begin(), segments.end(),
                                        [](const Segment& s) { return s.kind == SegmentKind::Kernel; }));
}

void plan_memory(Plan& plan) {
  std::unordered_map<const Value*, BufferPlan*> buffer_of;
  for (BufferPlan& b : plan.buffers) buffer_of[b.value] = &b;
  auto touch = [&](const Value* v, int when) {
    const Value* storage = plan.placement[v->id].storage;
    auto it = buffer_of.find(storage);
    if (it != buffer_of.end()) it->second->last_use = std::max(it->second->last_use, when);
  };
  const int end = static_cast<int>(plan.segments.size());
  for (int i = 0; i < end; ++i) {
    const Segment& s = plan.segments[i];
    for (const Value* v : s.inputs)
      if (v->is_tensor) touch(v, i);
    for (const Value* v : s.views) touch(v, i);
  }
  for (const OutputPlan& out : plan.outputs) touch(out.value, end);

  plan.allocated_bytes = 0;
  plan.peak_bytes = 0;
  int64_t live = 0;
  for (int i = 0; i <= end; ++i) {
    for (const BufferPlan& b : plan.buffers)
      if (b.producer == i) live += b.bytes, plan.allocated_bytes += b.bytes;
    plan.peak_bytes = std::max(plan.peak_bytes, live);
    for (const BufferPlan& b : plan.buffers)
      if (b.last_use == i && i < end) live -= b.bytes;
  }
}

}  // namespace vf
