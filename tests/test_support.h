// Helpers every test directory shares: skips, with their reasons, where CUDA or NVRTC is missing,
// and fresh temporary directories.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>
#include <string>

#include "runtime/cuda_api.h"
#include "runtime/cuda_device.h"

// Skips the current test, with the reason, when NVRTC cannot be loaded.
#define VF_TEST_REQUIRE_NVRTC() \
  if (!::vf::nvrtc_available()) GTEST_SKIP() << "NVRTC not found (searched " << ::vf::nvrtc_search_list() << ")"

// Skips the current test, with the reason, when there is no CUDA device (or driver).
#define VF_TEST_REQUIRE_GPU() \
  if (!::vf::cuda_available()) GTEST_SKIP() << "no CUDA device: the driver (libcuda.so.1) or a GPU is missing"

// Skips the current test, with the reason, when there is no CUDA device or NVRTC cannot be loaded.
#define VF_TEST_REQUIRE_GPU_AND_NVRTC() \
  VF_TEST_REQUIRE_GPU();                \
  VF_TEST_REQUIRE_NVRTC()

namespace vf::test {

// Whether tests that generate kernels on the CPU also compile their CUDA sources with NVRTC: when it
// can be loaded, unless VF_TEST_NVRTC=0 (./dev test's sanitizer pass, whose sources the first pass
// compiled already, and where NVRTC runs slowly).
inline bool nvrtc_checks_enabled() {
  const char* env = std::getenv("VF_TEST_NVRTC");
  return nvrtc_available() && !(env && std::string(env) == "0");
}

// Sets an environment variable for the scope, restoring the previous value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// NVRTC 12.9 and later can answer a compile from the driver's cache (CUDA_CACHE_DISABLE turns it
// off); a program found there never reaches ptxas and its log has no report. On the GPU machines
// a second compile of the same source (a second run of the spill test on the H200; kernels that
// two model regions share) found it there. Call at static initialization of a binary that reads
// ptxas reports, before any of its tests loads NVRTC or compiles; true when set.
inline bool turn_nvrtc_cache_off() { return setenv("CUDA_CACHE_DISABLE", "1", 1) == 0; }

// Bytes of spill stores in ptxas's report (NvrtcOptions::ptxas_report) of one kernel's compile
// log, or -1 where the log has no report (see turn_nvrtc_cache_off).
inline int64_t ptxas_spill_store_bytes(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("([0-9]+) bytes spill stores"))) return -1;
  return std::stoll(m[1].str());
}

// A path under the temporary directory that nothing else uses: <name>_<pid>_<random>, removed if
// it exists.
inline std::filesystem::path fresh_dir(const std::string& name) {
  std::random_device seed;
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (name + "_" + std::to_string(::getpid()) + "_" + std::to_string(seed()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace vf::test
