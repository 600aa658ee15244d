// Checking run-time arguments against a fusion's inputs: one rule and one message for every executor.
#pragma once

#include <cstddef>

#include "ir/ir.h"

namespace vf {

// What an argument is, as far as the check needs to know.
struct ArgView {
  bool is_tensor = true;
  bool defined = true;           // tensors: false for an undefined tensor
  DType dtype = DType::Float32;  // tensors
  const Shape* shape = nullptr;  // tensors
  Scalar scalar;                 // numbers
};

// UserError unless `count` arguments were given for the fusion's inputs.
void check_input_count(const Fusion& fusion, size_t count);
// UserError naming the input, what it expects and what was given: a tensor of the input's dtype
// and shape, or a number of the input's kind or a weaker one.
void check_input(const Value& input, const ArgView& arg);

}  // namespace vf
