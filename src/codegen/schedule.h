// Schedules: how each loop nest of a kernel's IR is run by threads, and the kernel's launch shape.
//
// Scheduling is a stage of its own (generate_kernel.cpp): schedule_cuda (schedule_cuda.h) and
// schedule_cpu (schedule_cpu.h) choose; the emitters (emit_source.h) read the result and print
// it, deciding nothing. print_kernel_ir (print_kernel_ir.h) prints a schedule beside its IR.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/kernel_abi.h"
#include "codegen/kernel_spec.h"

namespace vf {

enum class NestKind : uint8_t {
  // A loop over the nest's points: CUDA a grid-stride loop unravelling each point's multi-index
  // (a flat nest: its position), the CPU a walk of the work items. The vector kinds end with one,
  // for the points their packs leave.
  Loop,
  FlatVector,  // CUDA: a flat nest's 16-byte packs at the same offset in every buffer
  RowVector,   // CUDA: packs along the innermost dim, the outer index unravelled once per pack
  Tiled,       // CUDA: through shared-memory tiles of (the transposed dim, the innermost dim)
  Reduction,   // rows of a reduction nest: a team of threads per row (CUDA), a row per work item (CPU)
  // CUDA: a scan nest, or a scatter nest in order (LoopNest::in_order): a thread per position of
  // the other loop dims walks LoopNest::walk_dim in order.
  Walk,
};
const char* nest_kind_name(NestKind kind);  // "loop", "flat-vector", ...

// FlatVector and RowVector: packs of v elements, u packs (steps) per thread in its one pass, all
// loaded before the first is used.
struct VectorSchedule {
  int v = 1, u = 1;
  std::vector<char> loads;  // per value id: a load that moves whole packs
  // RowVector: the loop dim whose 2^row_tile_log consecutive values follow the innermost dim's
  // steps (ValueExpr::row_var), -1 for the row-major order. The kernel tests at run time that its
  // extent is a multiple, else takes the row-major order.
  int row_tile = -1;
  int row_tile_log = 0;
};

// Tiled: the packed variant of a tile's phases, taken when the run's layouts align its packs. The
// tiled loads read packs of v consecutive elements along the tiled dim, the loads in `last` and the
// stores packs along the innermost dim; a thread takes one pack column and every `rows`-th row.
struct PackedTile {
  int v = 1, rows = 1;
  std::vector<char> last;  // per value id: a load moved in packs along the innermost dim
};

struct TileSchedule {
  int dim = -1;     // the loop dim (not the innermost) that the tiled loads walk with unit stride
  int side = 0;     // tiles of side x side points of (dim, innermost dim)
  int rows = 1;     // element tiles: tile rows one pass of the block covers
  int per_thread = 1;  // element tiles: positions of a tile per thread in each phase
  std::vector<int> loads;  // value ids of the loads read through shared memory, in value order
  bool staged = false;     // every load of a tile issued before any is written to shared memory
  std::optional<PackedTile> packed;
};

// Reduction (CUDA): a team of `team` threads (AbiNest::team) takes a row. With per_thread > 0 the
// row stays in registers, each thread taking groups of vec consecutive elements.
struct ReductionSchedule {
  int per_thread = 0;  // row elements each thread keeps in registers (0: a strided loop over the row)
  int vec = 1;         // consecutive row elements a thread takes at a time (one 16-byte load)
  int registers = 64;  // registers per thread the schedule is made for (sets __launch_bounds__)
  // A sliced nest (> 0): blocks of 32 x slices threads take tiles of 32 neighbouring rows, lane l
  // row l of the tile, warp w the row's elements w, w + slices, ... (the team is the slices).
  int slices = 0;
  int load_registers = 0;  // what the row's loads take, were they all kept (choose_team's estimate)
  // With per_thread > 0, per value id: a load moved in packs of vec (packed), or kept in registers
  // for the row's later loops (cached: a load or a math-function result that several loops need);
  // per store: a full-shape store moved in packs. Preloaded: a packed load that only a later loop
  // needs, read in the first loop with the others (so that a row waits for memory once).
  std::vector<char> packed, cached, packed_store, preloaded;
  // The row's scalar loads (a norm's saved statistics) that no reduction's result feeds are read
  // before its first loop, in flight with it (emit_cuda_reduction.cpp).
  bool preload_row_values = false;
  // A serial nest: its rows' first-loop and scalar loads are read one row ahead (emit_cuda_reduction.cpp).
  bool prefetch = false;
  // A serial nest: those reads may go through a ring of rows ahead in shared memory, copied
  // asynchronously (cp.async), where it fits (emit_cuda_reduction.cpp chooses the depth), with
  // or without prefetch (which says whether they fit in registers instead).
  bool async_prefetch = false;
  // A serial nest of warp rows (> 0; switchable "warp-rows", schedule_cuda.cpp): a block of 32 x
  // warps threads takes a chunk, warp w its rows w, w + warps, ... (a team of 32: no block barrier
  // per row), each thread keeping its columns' sums of the warp's rows in registers; the warps'
  // sums are added through shared memory at the chunk's end (emit_cuda_reduction.cpp).
  int warps = 0;
};

struct NestSchedule {
  NestKind kind = NestKind::Loop;
  VectorSchedule vector;        // FlatVector and RowVector
  TileSchedule tile;            // Tiled
  ReductionSchedule reduction;  // Reduction
  // CUDA with 32-bit index math: per dim d >= 1 of the nest's multi-index unravelling (RowVector:
  // the loop dims, the innermost counted in packs; Tiled: the tile coordinates; Reduction: the row
  // dims), the Divider field that divides by its extent; -1 at d = 0 and without dividers.
  std::vector<int> dividers;
  int row_tile_divider = -1;  // RowVector with a row tile past dim 0: the Divider of its high part
};

struct KernelSchedule {
  Target target = Target::Cpu;
  // The launch contract: the IR's argument block with the Divider fields the schedule added, the
  // launch shape (block size, blocks per multiprocessor, each nest's team and grain) and the
  // fields' types and offsets (finalize_abi).
  KernelAbi abi;
  std::vector<NestSchedule> nests;  // one per nest of the IR
};

}  // namespace vf
