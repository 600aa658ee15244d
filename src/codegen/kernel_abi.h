// The argument block of a generated kernel: which fields it has, their C types and byte offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "ir/ir.h"
#include "layout/layout.h"

namespace vf {

// Index math of a CUDA kernel is 32-bit (KernelAbi::index32) when every extent, span and offset is
// below this.
inline constexpr int64_t kIndex32Limit = int64_t{1} << 31;

// What one field of the argument block holds. `a` and `b` say which buffer/dim/view/input.
enum class AbiFieldKind : uint8_t {
  InputData,     // a = fusion input: the buffer's address
  OutputData,    // a = fusion output: the buffer's address
  InputSize,     // a = input, b = dim: layout size
  InputStride,   // a = input, b = dim: layout stride (elements)
  InputOffset,   // a = input: layout offset (elements)
  OutputSize,    // a = output, b = dim
  OutputStride,  // a = output, b = dim
  OutputOffset,  // a = output
  ViewStride,    // a = view (KernelAbi::views), b = dim: stride of the view's composed layout
  ViewOffset,    // a = view: offset of the view's composed layout
  Constant,      // `value`: a number of this spec (a reshape size, a slice start, ...); a = node id, b = slot
  ScalarF64,     // a = fusion input: a scalar input passed as double
  ScalarI64,     // a = fusion input: a scalar input passed as int64 (bool as 0/1)
  // CUDA, 32-bit index math: the multiply-high divider of ceil(field a / b) (a = a size field of
  // this block, b >= 1), computed at launch: vf_divider m in the low 32 bits, its shift above.
  Divider,
  // Where a kernel with gathers reports the first index out of range: an int64_t[2] holding
  // {gather number (KernelAbi::gathers) or -1, the index}. The CPU backend passes one per launch;
  // CUDA passes null (a CUDA kernel reads 0 for such an element and reports nothing).
  IndexError,
};

// C type of a field: Ptr = void*, I64 = int64_t, I32 = int32_t, F64 = double.
enum class AbiFieldType : uint8_t { Ptr, I64, I32, F64 };

struct AbiField {
  AbiFieldKind kind = AbiFieldKind::Constant;
  AbiFieldType type = AbiFieldType::I64;
  int32_t a = 0, b = 0;
  int64_t value = 0;    // Constant only
  uint32_t offset = 0;  // byte offset in the block (natural alignment, C struct rules)
};

// The value of integer field `f` (I32 or I64) in the packed argument block `block`.
inline int64_t abi_int_field(const AbiField& f, const std::byte* block) {
  if (f.type == AbiFieldType::I32) {
    int32_t v;
    std::memcpy(&v, block + f.offset, 4);
    return v;
  }
  VF_INTERNAL_CHECK(f.type == AbiFieldType::I64, "field at offset ", f.offset, " of type ",
                    static_cast<int>(f.type), " read as an integer");
  int64_t v;
  std::memcpy(&v, block + f.offset, 8);
  return v;
}

// A chain of view ops from an input buffer that is a pure view (layout/view_algebra.h): the kernel
// loads through the composed layout, whose strides and offset pack_launch derives from the input's
// layout at launch. `steps` hold each view op's kind and attributes (no inputs or outputs).
struct AbiView {
  int32_t input = 0;
  std::vector<Node> steps;
  Layout spec_input_layout;  // the input layout the kernel was generated for ...
  Layout spec_view_layout;   // ... and the composed layout it gives (reused when the input matches)
};

// A pointwise nest's iteration space is the shape of fusion output `output`; a reduction nest
// (output -1) iterates `rows` rows of `inner` reduced elements.
struct AbiNest {
  int32_t output = -1;
  int64_t rows = 0, inner = 0;  // a serial nest: rows counts the chunks (the rows but the serial dim)
  int64_t serial = 1;           // a serial nest: the rows of a chunk
  int64_t inner_last = 0;  // the innermost reduced extent (a reduction nest)
  int32_t team = 0;  // CUDA: threads that reduce one row together (a warp or the whole block)
  bool inner_reduced = true;  // whether the innermost dim of the reduced tensor is a reduced one
  // CUDA: the points (a reduction nest: rows) one block covers in one pass of a vector, tiled or
  // row loop (0: a plain loop); such a nest is launched with a block per grain.
  int64_t grain = 0;
};

// The argument block: the source declares `struct VfArgs` with member `f<k>` for fields[k] at
// byte offset fields[k].offset (8-byte fields first, then 4-byte ones, so there is no padding).
struct KernelAbi {
  std::vector<AbiField> fields;
  std::vector<AbiView> views;
  std::vector<AbiNest> nests;
  uint32_t size = 0;   // sizeof(VfArgs), a multiple of `align`
  uint32_t align = 8;  // alignof(VfArgs)
  // The stride class each buffer dim was generated for (see kernel_ir.h StrideClass), checked
  // at launch: input_classes[i][d], output_classes[o][d], view_classes[v][d].
  std::vector<std::vector<uint8_t>> input_classes, output_classes, view_classes;
  // Buffers a flat loop nest reads or writes as contiguous (row-major) arrays; checked at launch.
  std::vector<int32_t> contiguous_inputs, contiguous_views, contiguous_outputs;
  // Per gather of the kernel (take, take_along_axis, gather), in gather number order: what an
  // index out of range is reported as ("prims.take t3 (dim 0 of size 50304 of w f32[50304, 768])").
  std::vector<std::string> gathers;
  // Outputs that scatter nests accumulate into: each launch fills them (their layouts' element
  // spans) with the scatter's base value before the kernel runs.
  struct FilledOutput {
    int32_t output = 0;
    int32_t element = 0;  // bytes
    uint64_t bits = 0;    // the base value's bits (little-endian, the low `element` bytes)
  };
  std::vector<FilledOutput> filled_outputs;
  bool index32 = false;  // CUDA: index math in 32 bits (every extent and storage span < 2^31)
  int32_t block_size = 256;  // CUDA threads per block
  // CUDA: blocks per multiprocessor the kernel is compiled to keep resident (the minimum of its
  // __launch_bounds__); plain loops get at most one wave of them. 0: unset (no minimum, cap 8).
  int32_t blocks_per_sm = 0;
};

int64_t abi_field_size(AbiFieldType type);

}  // namespace vf
