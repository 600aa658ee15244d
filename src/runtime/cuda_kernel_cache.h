// CUDA source to loaded kernel, through an in-memory cache, the disk cache and NVRTC.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runtime/cuda_kernel.h"
#include "runtime/disk_cache.h"

namespace vf {

struct CudaDevice;

// Thread-safe. Requests for different sources compile concurrently; concurrent requests for the
// same source wait for one compile. A failed compile is not remembered: the next request retries.
class CudaKernelCache {
 public:
  // A cache for `device` backed by `disk` (a disabled DiskCache for none).
  CudaKernelCache(const CudaDevice& device, std::unique_ptr<DiskCache> disk);

  // The kernel `entry` of `source`. The in-memory cache is keyed by source and entry (compared in
  // full on a hit); the disk cache also by NVRTC version, architecture and options. Throws
  // DeviceError when NVRTC is missing, compilation fails, or the driver rejects the image.
  // Sets *compiled, when given, to whether this call ran NVRTC.
  std::shared_ptr<const CudaKernel> load(std::string_view source, const std::string& entry, bool* compiled = nullptr);

  int64_t compile_count() const { return compile_count_.load(); }  // NVRTC compiles
  int64_t disk_hits() const { return disk_hits_.load(); }
  const DiskCache& disk_cache() const { return *disk_; }
  const CudaDevice& device() const { return device_; }

 private:
  using KernelFuture = std::shared_future<std::shared_ptr<const CudaKernel>>;
  struct Entry {
    std::string source;
    std::string entry;
    KernelFuture kernel;
  };
  std::shared_ptr<const CudaKernel> build(std::string_view source, const std::string& entry, bool& ran_nvrtc);

  const CudaDevice& device_;
  std::unique_ptr<DiskCache> disk_;
  std::mutex mutex_;
  std::unordered_multimap<uint64_t, Entry> entries_;  // by xxhash64 of source and entry
  std::atomic<int64_t> compile_count_{0};
  std::atomic<int64_t> disk_hits_{0};
};

// xxhash64 of a kernel's source and entry name: the in-memory key, also used in dump file names.
uint64_t cuda_source_hash(std::string_view source, std::string_view entry);

}  // namespace vf
