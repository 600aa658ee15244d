// The CPU backend: generated C++ kernels compiled by the host compiler, loaded with dlopen and run
// on a thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/disk_cache.h"
#include "runtime/specializer.h"

namespace vf {

struct CpuBackendOptions {
  std::string compiler = "c++";
  std::string flags = "-O2 -std=c++17 -shared -fPIC";
  // The disk cache of compiled shared objects, keyed by the source, the compiler's version, the
  // compiler command and flags and the host architecture; empty: none. CpuBackend::default_cache_dir()
  // is the per-user one. Sources and shared objects are built in a fresh temporary directory,
  // removed with the backend, either way.
  std::string cache_dir;
  // Every generated source is also written here when set; VF_DUMP_KERNELS=DIR sets it too.
  std::string dump_dir;
  int num_threads = 0;  // 0: std::thread::hardware_concurrency()
  int64_t inline_extent = 16384;  // launches with fewer work items run on the calling thread
  // When kernels are specialized to their launches' sizes (runtime/specializer.h); unset:
  // VF_SPECIALIZE's mode, Off when that is unset (a host compile takes a second).
  std::optional<SpecializeMode> specialize;
};

class CpuThreadPool;
struct CpuModule;
struct GeneratedKernel;

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options = {});
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  Target target() const override { return Target::Cpu; }
  // From the in-memory cache, else the disk cache, else compiled (and written to the disk cache).
  // A prepared kernel that specializes must not outlive its backend.
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec, const KernelIR& ir) override;
  using Backend::prepare;
  // Host compiler runs for generic kernels; disk-cache hits are not counted, specialized kernels are
  // in specialize_stats().
  int64_t compile_count() const override;
  const SpecializeStats& specialize_stats() const { return specialized_; }

  // default_cache_root()/cpu ($VF_CACHE_DIR, $XDG_CACHE_HOME/viewfuse or ~/.cache/viewfuse), or
  // empty when VF_DISABLE_DISK_CACHE=1 or no root is known.
  static std::string default_cache_dir();
  DiskCache& disk_cache() { return *disk_; }
  int64_t disk_hits() const;  // kernels loaded from the disk cache

 private:
  // The module of `kernel` from the in-memory cache, the disk cache or the compiler; sets compiled.
  std::shared_ptr<const CpuModule> module_for(const GeneratedKernel& kernel, bool& compiled);
  // Loads from the disk cache, else compiles (setting compiled).
  std::shared_ptr<CpuModule> compile(const std::string& source, const std::string& entry, size_t hash, bool& compiled);
  // The shared object in `image` (a disk-cache payload) loaded; null when it does not load.
  std::shared_ptr<CpuModule> load_image(const std::vector<std::byte>& image, const std::string& source,
                                        const std::string& entry, size_t hash);
  std::string cache_key(const std::string& source, const std::string& entry);

  CpuBackendOptions options_;
  std::string work_dir_;
  std::unique_ptr<DiskCache> disk_;
  std::string compiler_identity_;  // `compiler --version` and the host architecture, read once
  int64_t files_ = 0;              // shared objects written to work_dir_
  int64_t disk_hits_ = 0;
  std::shared_ptr<CpuThreadPool> pool_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<std::shared_ptr<CpuModule>>> modules_;  // by source hash
  int64_t compile_count_ = 0;
  int64_t dump_count_ = 0;
  SpecializeMode specialize_ = SpecializeMode::Off;
  SpecializeStats specialized_;
};

}  // namespace vf
