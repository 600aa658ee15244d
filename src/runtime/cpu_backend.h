// The CPU backend: generated C++ kernels compiled by the host compiler, loaded with dlopen and run
// on a thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"

namespace vf {

struct CpuBackendOptions {
  std::string compiler = "c++";
  std::string flags = "-O2 -std=c++17 -shared -fPIC";
  // Where sources and shared objects go. Empty: a fresh temporary directory, removed with the
  // backend. (A disk cache keyed by source would look up cache_dir before compiling.)
  std::string cache_dir;
  // Every generated source is also written here when set; VF_DUMP_KERNELS=DIR sets it too.
  std::string dump_dir;
  int num_threads = 0;  // 0: std::thread::hardware_concurrency()
  int64_t inline_extent = 16384;  // launches with fewer work items run on the calling thread
};

class CpuThreadPool;
struct CpuModule;

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options = {});
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  Target target() const override { return Target::Cpu; }
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec) override;
  int64_t compile_count() const override;

 private:
  std::shared_ptr<CpuModule> compile(const std::string& source, const std::string& entry, size_t hash);

  CpuBackendOptions options_;
  std::string work_dir_;
  bool owns_work_dir_ = false;
  std::shared_ptr<CpuThreadPool> pool_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<std::shared_ptr<CpuModule>>> modules_;  // by source hash
  int64_t compile_count_ = 0;
  int64_t dump_count_ = 0;
};

}  // namespace vf
