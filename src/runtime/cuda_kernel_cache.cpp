// The CUDA kernel cache: in memory by source, on disk by source, compiler and architecture.
#include "runtime/cuda_kernel_cache.h"

#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "base/error.h"
#include "runtime/cuda_device.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

bool line_info_requested() {
  const char* value = std::getenv("VF_NVRTC_LINEINFO");
  return value && std::strcmp(value, "1") == 0;
}

}  // namespace

uint64_t cuda_source_hash(std::string_view source, std::string_view entry) {
  return XXH64(source.data(), source.size(), XXH64(entry.data(), entry.size(), 0));
}

CudaKernelCache::CudaKernelCache(const CudaDevice& device, std::unique_ptr<DiskCache> disk)
    : device_(device), disk_(std::move(disk)) {}

std::shared_ptr<const CudaKernel> CudaKernelCache::build(std::string_view source, const std::string& entry,
                                                         bool& ran_nvrtc) {
  const NvrtcOptions options{.line_info = line_info_requested()};
  const std::string key =
      make_cache_key({"viewfuse cuda kernel", nvrtc_version_string(), detail::concat(device_.cc_major, device_.cc_minor),
                      options.line_info ? "lineinfo" : "", entry, source});
  if (std::optional<std::vector<std::byte>> image = disk_->get(key)) {
    try {
      auto kernel = std::make_shared<const CudaKernel>(device_, *image, entry);
      ++disk_hits_;
      return kernel;
    } catch (const DeviceError&) {
      // An entry the driver rejects (written by a broken build, say) is rebuilt below.
    }
  }
  CompiledCuda compiled = nvrtc_compile(source, entry, device_.cc_major, device_.cc_minor, options);
  ++compile_count_;
  ran_nvrtc = true;
  auto kernel = std::make_shared<const CudaKernel>(device_, compiled.image, entry);
  disk_->put(key, compiled.image);
  return kernel;
}

std::shared_ptr<const CudaKernel> CudaKernelCache::load(std::string_view source, const std::string& entry,
                                                        bool* compiled) {
  bool built = false;
  const uint64_t hash = cuda_source_hash(source, entry);
  auto matches = [&](const Entry& e) { return e.source == source && e.entry == entry; };
  std::promise<std::shared_ptr<const CudaKernel>> promise;
  KernelFuture future;
  bool builder = false;
  {
    std::lock_guard lock(mutex_);
    auto [begin, end] = entries_.equal_range(hash);
    for (auto it = begin; it != end && !future.valid(); ++it)
      if (matches(it->second)) future = it->second.kernel;
    if (!future.valid()) {
      // This thread builds; others asking for the same kernel meanwhile wait on the future.
      future = promise.get_future().share();
      entries_.emplace(hash, Entry{std::string(source), entry, future});
      builder = true;
    }
  }
  if (builder) {
    try {
      promise.set_value(build(source, entry, built));
    } catch (...) {
      promise.set_exception(std::current_exception());
      // Forget the failure, so that a later request tries again.
      std::lock_guard lock(mutex_);
      auto [begin, end] = entries_.equal_range(hash);
      for (auto it = begin; it != end; ++it)
        if (matches(it->second)) {
          entries_.erase(it);
          break;
        }
    }
  }
  if (compiled) *compiled = built;
  return future.get();  // rethrows the builder's error
}

}  // namespace vf
