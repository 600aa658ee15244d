// Device memory: allocation with accounting, copies and fills, on device 0's primary context.
#include "runtime/cuda_memory.h"

#include <atomic>
#include <utility>

#include "base/error.h"
#include "runtime/cuda_device.h"

namespace vf {
namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_allocated_bytes{0};

CUdeviceptr device_pointer(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }

// The driver table with device 0's context current on this thread.
const CudaDriverApi& current_api() {
  const CudaDevice& device = cuda_device(0);
  cuda_make_current(device);
  return cuda_driver_api();
}

void check_size(const char* what, int64_t bytes) {
  if (bytes < 0) throw DeviceError(detail::concat(what, ": byte count must be >= 0, got ", bytes));
}

}  // namespace

void* cuda_alloc(int64_t bytes) {
  check_size("cuda_alloc", bytes);
  const CudaDriverApi& api = current_api();
  CUdeviceptr pointer = 0;
  // cuMemAlloc rejects 0 bytes; a 1-byte block keeps the pointer valid and distinct.
  CUresult result = api.cuMemAlloc(&pointer, static_cast<size_t>(bytes > 0 ? bytes : 1));
  if (result == kCudaErrorOutOfMemory) {
    size_t free_bytes = 0, total_bytes = 0;
    api.cuMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceError(detail::concat("out of device memory allocating ", bytes, " bytes (", free_bytes, " of ",
                                     total_bytes, " bytes free; viewfuse holds ", g_live_bytes.load(), ")"));
  }
  cuda_check(result, "cuMemAlloc");
  g_live_bytes += bytes;
  g_allocated_bytes += bytes;
  return reinterpret_cast<void*>(pointer);
}

void cuda_free(void* pointer, int64_t bytes) {
  if (!pointer) return;
  g_live_bytes -= bytes;
  // Freeing cannot usefully fail: at process exit the driver may already be shut down.
  try {
    current_api().cuMemFree(device_pointer(pointer));
  } catch (const Error&) {
  }
}

void cuda_copy_to_device(void* device_dst, const void* host_src, int64_t bytes, void* stream) {
  check_size("cuda_copy_to_device", bytes);
  if (bytes == 0) return;
  const CudaDriverApi& api = current_api();
  if (stream)
    cuda_check(api.cuMemcpyHtoDAsync(device_pointer(device_dst), host_src, bytes, static_cast<CUstream>(stream)),
               "cuMemcpyHtoDAsync");
  else
    cuda_check(api.cuMemcpyHtoD(device_pointer(device_dst), host_src, bytes), "cuMemcpyHtoD");
}

void cuda_copy_to_host(void* host_dst, const void* device_src, int64_t bytes, void* stream) {
  check_size("cuda_copy_to_host", bytes);
  if (bytes == 0) return;
  const CudaDriverApi& api = current_api();
  if (stream)
    cuda_check(api.cuMemcpyDtoHAsync(host_dst, device_pointer(device_src), bytes, static_cast<CUstream>(stream)),
               "cuMemcpyDtoHAsync");
  else
    cuda_check(api.cuMemcpyDtoH(host_dst, device_pointer(device_src), bytes), "cuMemcpyDtoH");
}

void cuda_memset(void* device_dst, unsigned char value, int64_t bytes, void* stream) {
  check_size("cuda_memset", bytes);
  if (bytes == 0) return;
  const CudaDriverApi& api = current_api();
  if (stream)
    cuda_check(api.cuMemsetD8Async(device_pointer(device_dst), value, bytes, static_cast<CUstream>(stream)),
               "cuMemsetD8Async");
  else
    cuda_check(api.cuMemsetD8(device_pointer(device_dst), value, bytes), "cuMemsetD8");
}

void cuda_fill(void* device_dst, uint64_t bits, int element, int64_t count, void* stream) {
  check_size("cuda_fill", count * element);
  if (count == 0) return;
  if (bits == 0 || element == 1) {
    cuda_memset(device_dst, static_cast<unsigned char>(bits), count * element, stream);
    return;
  }
  const CudaDriverApi& api = current_api();
  const auto s = static_cast<CUstream>(stream);
  const auto low = static_cast<unsigned>(bits), high = static_cast<unsigned>(bits >> 32);
  const CUdeviceptr dst = device_pointer(device_dst);
  const auto n = static_cast<size_t>(count);
  if (element == 4 || (element == 8 && low == high)) {
    cuda_check(api.cuMemsetD32Async(dst, low, element == 4 ? n : 2 * n, s), "cuMemsetD32Async");
    return;
  }
  VF_INTERNAL_CHECK(element == 8, "cuda_fill: elements of ", element, " bytes");
  // The low and the high words: a column of one word, eight bytes apart.
  cuda_check(api.cuMemsetD2D32Async(dst, 8, low, 1, n, s), "cuMemsetD2D32Async");
  cuda_check(api.cuMemsetD2D32Async(dst + 4, 8, high, 1, n, s), "cuMemsetD2D32Async");
}

void cuda_stream_synchronize(void* stream) {
  cuda_check(current_api().cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
}

int64_t cuda_live_bytes() { return g_live_bytes.load(); }
int64_t cuda_allocated_bytes() { return g_allocated_bytes.load(); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    cuda_free(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace vf
