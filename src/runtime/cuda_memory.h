// Device memory on CUDA device 0: allocation with process-wide accounting, copies and fills.
#pragma once

#include <cstdint>

namespace vf {

// Allocates `bytes` of device memory (256-byte aligned; 0 bytes gives a valid, distinct pointer).
// Throws DeviceError "out of device memory allocating N bytes" when the device is full; the
// process stays usable. Counted in cuda_live_bytes / cuda_allocated_bytes.
void* cuda_alloc(int64_t bytes);
// Frees memory from cuda_alloc; `bytes` must be the size it was allocated with. Null is a no-op.
void cuda_free(void* pointer, int64_t bytes);

// Copies. `stream` (a CUstream) null means synchronous copies; otherwise the copy is queued on
// that stream (host memory must then stay alive until the stream reaches it).
void cuda_copy_to_device(void* device_dst, const void* host_src, int64_t bytes, void* stream = nullptr);
void cuda_copy_to_host(void* host_dst, const void* device_src, int64_t bytes, void* stream = nullptr);
// Sets `bytes` bytes at device_dst to `value`: on the legacy default stream when `stream` is null,
// else queued on that stream.
void cuda_memset(void* device_dst, unsigned char value, int64_t bytes, void* stream = nullptr);
// Sets `count` elements of `element` bytes (1, 4 or 8) at device_dst to the element whose bits are
// `bits` (little-endian, the low `element` bytes), queued on `stream` (null: the legacy default).
void cuda_fill(void* device_dst, uint64_t bits, int element, int64_t count, void* stream);
// Waits for a stream (null: the legacy default stream).
void cuda_stream_synchronize(void* stream);

// Live and total bytes allocated by cuda_alloc in this process (for allocation accounting tests).
int64_t cuda_live_bytes();
int64_t cuda_allocated_bytes();

// Device memory owned by a scope.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t bytes) : data_(cuda_alloc(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { cuda_free(data_, bytes_); }
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace vf
