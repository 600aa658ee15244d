// Removes the casts of a float value to another float dtype and back that a kernel need not round.
//
// Two casts in a row, y = convert(x, D1) and z = convert(y, D2), x of float dtype D0:
//
//  - exact: D1 holds every value of D0 (bf16 or f16 to f32, f32 to f64; the same dtype), so z
//    equals convert(x, D2), and is x itself when D2 is D0. Always applied: the results are the
//    original's, bit for bit.
//  - rounding: D1 is bf16 or f16, D0 and D2 are f32 or f64, and x is the result of arithmetic in
//    the fusion (an elementwise op or a reduction: not an input, nor a view, a movement or a cast
//    of something), so y rounds a computed value to fewer bits and z widens it again. With
//    `drop_roundings`, z becomes convert(x, D2) (x when D2 is D0): the value is kept in float32.
//
// Thunder decomposes each bf16 op into float32 math and a round trip through bf16 (a tanh GELU has
// eleven); eager PyTorch computes an op such as GELU in float32 and rounds once. Dropping the
// intermediate roundings brings the result closer to float64's, as torch.compile's fused kernels
// do, and removes two conversions a step from the kernel. Where eager rounds between separate ops
// (x * cos + rotate(x) * sin in bf16), the result then differs from eager's, by about an ulp of the
// operands where they cancel. It is an option (PlanOptions::elide_round_trips, on by default; the
// reference executor always rounds); an input's rounding (a declared dtype, or a program that
// rounds its input on purpose) is never dropped. y itself is still computed where something else
// reads it. docs/design.md, "Round trips through 16-bit floats", has the measurements.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion elide_round_trip_casts(const Fusion& fusion, bool drop_roundings);

}  // namespace vf
