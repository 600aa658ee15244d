// Hand-written reference kernels for the merge-heads producer, timed by bench/producer_ab.py.
//
// y[b, s, h*128 + d] = bf16(bf16(x[b, h, s, d] * 0.125) + 1), x bf16 [16, 32, 2048, 128]: the sizes
// are compile-time constants, as in torch.compile(dynamic=False)'s kernel, and the schedules are
// those the generated kernel can take (blocks of 16-byte packs, a tile of heads x rows per block),
// so that the A/B tool separates what a schedule costs from what run-time sizes cost.
//   nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o build-bench/producer_kernels.so bench/producer_kernels.cu
// (-DVF_REF_BULK adds the bulk-copy variants, which have not run on a GPU yet.)
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kB = 16, kH = 32, kS = 2048, kPacks = 16;  // kPacks: 16-byte packs per row of 128 bf16

__device__ __forceinline__ unsigned short to_bf16(float f) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
__device__ __forceinline__ float from_bf16(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }

// The producer's arithmetic on a pack of 8 bf16, rounded to bf16 after each op as the trace does.
__device__ __forceinline__ uint4 scale_add(uint4 v) {
  unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float lo = from_bf16(to_bf16(from_bf16(w[i] & 0xffff) * 0.125f)) + 1.0f;
    const float hi = from_bf16(to_bf16(from_bf16(w[i] >> 16) * 0.125f)) + 1.0f;
    w[i] = to_bf16(lo) | (static_cast<unsigned>(to_bf16(hi)) << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// The packs of one tile: kTs rows along S of kTh heads. A thread takes packs t, t + kThreads, ...
// of the tile in the order (d, s, h) (kRowsFirst: a warp walks input rows) or (d, h, s) (output
// rows). kSameOrder reads x at the output's index: a plain copy with the same shape, not the
// producer's values.
template <int kTh, int kTs, int kThreads, int kU, bool kRowsFirst, bool kSameOrder>
__device__ __forceinline__ void move_tile(const uint4* __restrict__ x, uint4* __restrict__ y, unsigned tile) {
  static_assert(kThreads * kU == kTh * kTs * kPacks, "a block moves one tile per pass");
  const unsigned ht = tile % (kH / kTh), st = tile / (kH / kTh) % (kS / kTs), b = tile / (kH / kTh) / (kS / kTs);
  uint4 v[kU];
  unsigned out[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const unsigned p = u * kThreads + threadIdx.x, d = p % kPacks, r = p / kPacks;
    const unsigned hi = kRowsFirst ? r / kTs : r % kTh, si = kRowsFirst ? r % kTs : r / kTh;
    const unsigned h = ht * kTh + hi, s = st * kTs + si;
    out[u] = ((b * kS + s) * kH + h) * kPacks + d;
    v[u] = x[kSameOrder ? out[u] : ((b * kH + h) * kS + s) * kPacks + d];
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) y[out[u]] = scale_add(v[u]);
}

template <int kTh, int kTs, int kThreads, int kU, bool kRowsFirst, bool kSameOrder>
__global__ void __launch_bounds__(kThreads) tile_kernel(const uint4* __restrict__ x, uint4* __restrict__ y) {
  move_tile<kTh, kTs, kThreads, kU, kRowsFirst, kSameOrder>(x, y, blockIdx.x);
}

// A grid of a few blocks per multiprocessor, each walking tiles i, i + gridDim.x, ...
template <int kTh, int kTs, int kThreads, int kU, bool kRowsFirst>
__global__ void __launch_bounds__(kThreads) persistent_kernel(const uint4* __restrict__ x, uint4* __restrict__ y) {
  constexpr unsigned kTiles = kB * (kH / kTh) * (kS / kTs);
  for (unsigned tile = blockIdx.x; tile < kTiles; tile += gridDim.x)
    move_tile<kTh, kTs, kThreads, kU, kRowsFirst, false>(x, y, tile);
}

template <int kTh, int kTs, int kThreads, int kU, bool kRowsFirst, bool kSameOrder>
void launch_tiles(const void* x, void* y, cudaStream_t stream) {
  tile_kernel<kTh, kTs, kThreads, kU, kRowsFirst, kSameOrder><<<kB * (kH / kTh) * (kS / kTs), kThreads, 0, stream>>>(
      static_cast<const uint4*>(x), static_cast<uint4*>(y));
}

template <int kTh, int kTs, int kThreads, int kU, bool kRowsFirst, int kBlocksPerSm>
void launch_persistent(const void* x, void* y, cudaStream_t stream) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  persistent_kernel<kTh, kTs, kThreads, kU, kRowsFirst><<<sms * kBlocksPerSm, kThreads, 0, stream>>>(
      static_cast<const uint4*>(x), static_cast<uint4*>(y));
}

#ifdef VF_REF_BULK
// Not yet run on a GPU. The input side through the bulk copy engine: thread 0 starts one
// cp.async.bulk per head of the tile (kTs rows, contiguous in x) into shared memory, completing on
// an mbarrier; every thread then takes its packs from shared memory, in the tile's (d, s, h) order,
// and stores them as move_tile does. No per-thread index math stands before the loads.
template <int kTh, int kTs>
__global__ void __launch_bounds__(128) bulk_kernel(const uint4* __restrict__ x, uint4* __restrict__ y) {
  constexpr unsigned kTilePacks = kTh * kTs * kPacks, kRunBytes = kTs * kPacks * 16;
  __shared__ alignas(128) uint4 tile[kTilePacks];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned t = blockIdx.x;
  const unsigned ht = t % (kH / kTh), st = t / (kH / kTh) % (kS / kTs), b = t / (kH / kTh) / (kS / kTs);
  const unsigned bar_s = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_s));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_s), "r"(kTh * kRunBytes) : "memory");
#pragma unroll
    for (int h = 0; h < kTh; ++h) {
      const uint4* src = x + ((b * kH + ht * kTh + h) * kS + st * kTs) * kPacks;
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile + h * kTs * kPacks));
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(dst), "l"(src), "r"(kRunBytes), "r"(bar_s) : "memory");
    }
  }
  __syncthreads();  // the barrier is initialized before anyone waits on it
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait;\n"
      "}\n" ::"r"(bar_s) : "memory");
#pragma unroll
  for (unsigned p = threadIdx.x; p < kTilePacks; p += 128) {
    const unsigned d = p % kPacks, r = p / kPacks, h = ht * kTh + r / kTs, s = st * kTs + r % kTs;
    y[((b * kS + s) * kH + h) * kPacks + d] = scale_add(tile[p]);
  }
}

template <int kTh, int kTs>
void launch_bulk(const void* x, void* y, cudaStream_t stream) {
  bulk_kernel<kTh, kTs><<<kB * (kH / kTh) * (kS / kTs), 128, 0, stream>>>(static_cast<const uint4*>(x),
                                                                          static_cast<uint4*>(y));
}
#endif

struct Variant {
  const char* name;
  bool producer;  // computes the producer's values (checked against eager)
  void (*launch)(const void*, void*, cudaStream_t);
};

const Variant kVariants[] = {
    {"tiles_2x8_128x2", true, launch_tiles<2, 8, 128, 2, true, false>},  // the generated kernel's schedule
    {"tiles_2x8_128x2_output_rows", true, launch_tiles<2, 8, 128, 2, false, false>},
    {"tiles_2x4_64x2", true, launch_tiles<2, 4, 64, 2, true, false>},
    {"tiles_4x8_256x2", true, launch_tiles<4, 8, 256, 2, true, false>},
    {"tiles_8x8_512x2", true, launch_tiles<8, 8, 512, 2, false, false>},
    {"tiles_8x1_128x1", true, launch_tiles<8, 1, 128, 1, false, false>},  // Triton's shape
    {"tiles_32x1_256x2", true, launch_tiles<32, 1, 256, 2, false, false>},  // one output row per block
    {"tiles_2x16_128x4", true, launch_tiles<2, 16, 128, 4, true, false>},  // four packs per thread
    {"persistent_2x8_128x2", true, launch_persistent<2, 8, 128, 2, true, 12>},
    {"same_order_copy_32x1_256x2", false, launch_tiles<32, 1, 256, 2, false, true>},
#ifdef VF_REF_BULK
    {"bulk_2x8", true, launch_bulk<2, 8>},
    {"bulk_2x16", true, launch_bulk<2, 16>},
    {"bulk_4x8", true, launch_bulk<4, 8>},
#endif
};

}  // namespace

extern "C" int vf_ref_count() { return static_cast<int>(sizeof(kVariants) / sizeof(kVariants[0])); }
extern "C" const char* vf_ref_name(int i) { return kVariants[i].name; }
extern "C" int vf_ref_is_producer(int i) { return kVariants[i].producer; }
// Launches variant i on `stream` (a cudaStream_t); returns the cudaError_t of the launch.
extern "C" int vf_ref_launch(int i, const void* x, void* y, void* stream) {
  kVariants[i].launch(x, y, static_cast<cudaStream_t>(stream));
  return static_cast<int>(cudaGetLastError());
}
