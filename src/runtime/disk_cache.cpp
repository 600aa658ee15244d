// The on-disk cache of compiled kernel binaries: checked reads, atomic writes.
#include "runtime/disk_cache.h"

#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

namespace vf {
namespace {

namespace fs = std::filesystem;

uint64_t hash_bytes(const void* data, size_t size) { return XXH64(data, size, 0); }

std::string hex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Little-endian fixed-width fields, so entries do not depend on the host's struct layout.
void put_u32(std::byte* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}
void put_u64(std::byte* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}
uint32_t get_u32(const std::byte* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(in[i]) << (8 * i);
  return value;
}
uint64_t get_u64(const std::byte* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

// Reads a whole file; nullopt when it cannot be opened or read.
std::optional<std::vector<std::byte>> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) return std::nullopt;
  return bytes;
}

// Writes `parts` to `path` in one go; false on any failure.
bool write_file(const fs::path& path, std::initializer_list<std::span<const std::byte>> parts) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return false;
  bool ok = true;
  for (std::span<const std::byte> part : parts)
    if (!part.empty() && std::fwrite(part.data(), 1, part.size(), file) != part.size()) ok = false;
  if (std::fclose(file) != 0) ok = false;
  return ok;
}

std::atomic<uint64_t> g_temp_counter{0};

}  // namespace

DiskCache::DiskCache(fs::path dir, std::string extension) : dir_(std::move(dir)), extension_(std::move(extension)) {
  if (dir_.empty()) state_ = 2;
}

std::unique_ptr<DiskCache> DiskCache::open_default(std::string_view subdir, std::string extension) {
  const char* disable = std::getenv("VF_DISABLE_DISK_CACHE");
  fs::path root = default_cache_root();
  if ((disable && std::strcmp(disable, "1") == 0) || root.empty())
    return std::make_unique<DiskCache>(fs::path(), std::move(extension));
  return std::make_unique<DiskCache>(root / subdir, std::move(extension));
}

fs::path DiskCache::entry_path(std::string_view key) const {
  return dir_ / (hex16(hash_bytes(key.data(), key.size())) + extension_);
}

bool DiskCache::ensure_dir() {
  int state = state_.load();
  if (state != 0) return state == 1;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  bool ok = !ec && fs::is_directory(dir_, ec) && !ec && ::access(dir_.c_str(), W_OK | X_OK) == 0;
  state_ = ok ? 1 : 2;
  return ok;
}

bool DiskCache::usable() { return ensure_dir(); }

std::optional<std::vector<std::byte>> DiskCache::get(std::string_view key) {
  if (dir_.empty()) {
    ++misses_;
    return std::nullopt;
  }
  const fs::path path = entry_path(key);
  std::optional<std::vector<std::byte>> file = read_file(path);
  if (!file) {
    ++misses_;
    return std::nullopt;
  }
  const std::vector<std::byte>& bytes = *file;
  auto reject = [&]() -> std::optional<std::vector<std::byte>> {
    std::error_code ec;
    fs::remove(path, ec);
    ++rejected_;
    ++misses_;
    return std::nullopt;
  };
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return reject();
  if (get_u32(bytes.data() + 8) != kFormatVersion) return reject();
  const uint64_t key_length = get_u64(bytes.data() + 16);
  const uint64_t payload_length = get_u64(bytes.data() + 24);
  if (key_length != key.size()) return reject();
  if (bytes.size() < kHeaderBytes + key_length || payload_length != bytes.size() - kHeaderBytes - key_length)
    return reject();
  const std::byte* stored_key = bytes.data() + kHeaderBytes;
  const std::byte* payload = stored_key + key_length;
  if (get_u64(bytes.data() + 32) != hash_bytes(key.data(), key.size()) ||
      std::memcmp(stored_key, key.data(), key.size()) != 0)
    return reject();
  if (get_u64(bytes.data() + 40) != hash_bytes(payload, payload_length)) return reject();
  ++hits_;
  return std::vector<std::byte>(payload, payload + payload_length);
}

void DiskCache::put(std::string_view key, std::span<const std::byte> payload) {
  if (!ensure_dir()) {
    ++write_failures_;
    return;
  }
  std::byte header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof kMagic);
  put_u32(header + 8, kFormatVersion);
  put_u64(header + 16, key.size());
  put_u64(header + 24, payload.size());
  put_u64(header + 32, hash_bytes(key.data(), key.size()));
  put_u64(header + 40, hash_bytes(payload.data(), payload.size()));

  const fs::path path = entry_path(key);
  fs::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_temp_counter++);
  std::error_code ec;
  const bool written = write_file(temp, {std::span<const std::byte>(header, kHeaderBytes),
                                         std::as_bytes(std::span<const char>(key.data(), key.size())), payload});
  if (written) fs::rename(temp, path, ec);
  if (!written || ec) {
    fs::remove(temp, ec);
    ++write_failures_;
    state_ = 2;  // stop trying: the directory went away or became read-only
    return;
  }
  ++writes_;
}

DiskCache::Stats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), writes_.load(), rejected_.load(), write_failures_.load()};
}

fs::path default_cache_root() {
  if (const char* dir = std::getenv("VF_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "viewfuse";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "viewfuse";
  return {};
}

std::string make_cache_key(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (std::string_view part : parts) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
    key += '\n';
  }
  return key;
}

fs::path dump_kernel_source(std::string_view name, std::string_view source, std::string_view extension) {
  const char* dir = std::getenv("VF_DUMP_KERNELS");
  if (!dir || !*dir) return {};
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path path = fs::path(dir) / (std::string(name) + std::string(extension));
  std::span<const std::byte> bytes = std::as_bytes(std::span<const char>(source.data(), source.size()));
  if (!write_file(path, {bytes})) return {};
  return path;
}

}  // namespace vf
