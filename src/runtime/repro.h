// Repro files: a fusion as a trace the reader reads back, preceded by a comment block holding the
// input layouts and a note; written when an internal error escapes compile or execution.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "ir/ir.h"
#include "layout/layout.h"
#include "runtime/tensor.h"

namespace vf {

// The repro text:
//   # viewfuse repro
//   # NOTE (each line of the note, commented)
//   # layout NAME: sizes [2, 3] strides [1, 2] offset 0     (one line per tensor input)
//   # values: seed 7
//   def computation(...): ...                                (print_trace)
// `input_layouts` has one entry per fusion input; entries of scalar inputs are ignored.
std::string format_repro(const Fusion& fusion, const std::vector<Layout>& input_layouts, std::string_view note,
                         uint64_t value_seed = 0);

// The layouts of a repro's `# layout` lines, one per fusion input (contiguous for an input that
// has no line). Throws UserError naming the line when one is malformed or does not fit the input.
std::vector<Layout> read_repro_layouts(std::string_view text, const Fusion& fusion);
// The `# values: seed N` of a repro, 0 when absent.
uint64_t read_repro_seed(std::string_view text);

// $VF_REPRO_DIR, else <temporary directory>/viewfuse-repro.
std::filesystem::path repro_dir();

// Writes the repro to repro_dir()/repro-<hash of the text>.py (creating the directory) and
// returns its path; returns an empty path when it cannot be written. Never throws.
std::filesystem::path write_repro(const Fusion& fusion, const std::vector<Layout>& input_layouts,
                                  std::string_view note);

// Throws an InternalError with error's message followed by "\nrepro: PATH" (or the reason no repro
// could be written). The layouts are those of the tensor arguments.
[[noreturn]] void rethrow_with_repro(const InternalError& error, const Fusion& fusion, const std::vector<Arg>& args);
// The same with the input layouts given directly (one per fusion input).
[[noreturn]] void rethrow_with_repro(const InternalError& error, const Fusion& fusion,
                                     const std::vector<Layout>& input_layouts);

}  // namespace vf
