// The memory plan: buffer lifetimes, the bytes one execution allocates and the peak alive at once.
#pragma once

#include "segment/plan.h"

namespace vf {

// Fills BufferPlan::last_use, Plan::allocated_bytes and Plan::peak_bytes. Inputs are not counted;
// a buffer dies after the last segment that reads it, unless an output is (a view of) it.
void plan_memory(Plan& plan);

}  // namespace vf
