// An on-disk cache of compiled kernel binaries (CUBIN for CUDA, shared objects for the CPU).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vf {

// Each entry is one file, <dir>/<xxhash64 of the key, 16 hex digits><extension>, holding a header
// (magic, format version, key and payload lengths, xxhash64 of each), the full key text and the
// payload. A read checks all of it, so a corrupt, truncated or colliding entry is never returned:
// it is deleted and counted, and the caller rebuilds it. Writes go to a temporary file that is then
// renamed, so readers (other threads or processes) never see a partial entry. If the directory
// cannot be created or written, the cache silently does nothing (see usable() and the counters).
// Thread-safe.
class DiskCache {
 public:
  // A cache in `dir`, created on first use. An empty path gives a disabled cache.
  DiskCache(std::filesystem::path dir, std::string extension);

  // The cache under default_cache_root()/subdir, or a disabled cache when VF_DISABLE_DISK_CACHE=1
  // or no root can be found.
  static std::unique_ptr<DiskCache> open_default(std::string_view subdir, std::string extension);

  std::optional<std::vector<std::byte>> get(std::string_view key);
  void put(std::string_view key, std::span<const std::byte> payload);

  // Whether the directory exists and is writable (false once a write has failed).
  bool usable();
  const std::filesystem::path& dir() const { return dir_; }
  // The file an entry for `key` lives in.
  std::filesystem::path entry_path(std::string_view key) const;

  struct Stats {
    int64_t hits = 0, misses = 0, writes = 0;
    int64_t rejected = 0;        // corrupt, truncated, mismatched or colliding entries seen by get
    int64_t write_failures = 0;  // puts that could not be written (directory missing or read-only)
  };
  Stats stats() const;

  static constexpr char kMagic[8] = {'V', 'F', 'C', 'A', 'C', 'H', 'E', '1'};
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 48;

 private:
  bool ensure_dir();

  std::filesystem::path dir_;
  std::string extension_;
  std::atomic<int> state_{0};  // 0 unknown, 1 usable, 2 unusable
  std::atomic<int64_t> hits_{0}, misses_{0}, writes_{0}, rejected_{0}, write_failures_{0};
};

// $VF_CACHE_DIR, else $XDG_CACHE_HOME/viewfuse, else $HOME/.cache/viewfuse; empty if none is set.
std::filesystem::path default_cache_root();

// Joins key parts into one unambiguous key text (each part prefixed by its length).
std::string make_cache_key(std::initializer_list<std::string_view> parts);

// When VF_DUMP_KERNELS=DIR is set, writes `source` to DIR/<name><extension> (creating DIR) and
// returns the path; otherwise, or when the write fails, returns an empty path. Never throws.
std::filesystem::path dump_kernel_source(std::string_view name, std::string_view source, std::string_view extension);

}  // namespace vf
