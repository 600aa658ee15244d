// Tests of DiskCache: round trips, and damaged, mismatched or unwritable entries detected without a crash.
#include "runtime/disk_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

namespace vf {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> bytes(text.size());
  for (size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<std::byte>(text[i]);
  return bytes;
}

std::vector<char> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A fresh directory under the temporary directory, removed at the end of the test.
class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device seed;
    dir_ = fs::temp_directory_path() / ("vf_disk_cache_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(seed()));
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  const std::string key_ = make_cache_key({"kernel", "nvrtc 13.0", "90", "extern \"C\" __global__ void k() {}"});
  const std::vector<std::byte> payload_ = bytes_of("\x7f" "ELF payload bytes");
};

TEST_F(DiskCacheTest, PutThenGet_ReturnsPayload) {
  DiskCache cache(dir_ / "cuda", ".cubin");
  EXPECT_FALSE(cache.get(key_).has_value());
  cache.put(key_, payload_);
  std::optional<std::vector<std::byte>> got = cache.get(key_);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload_);
  EXPECT_TRUE(fs::exists(cache.entry_path(key_)));
  EXPECT_EQ(cache.entry_path(key_).extension(), ".cubin");
  DiskCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.writes, 1);
  EXPECT_EQ(stats.rejected, 0);
  // The file is the header, the key and the payload, nothing else (no temporary files left over).
  EXPECT_EQ(fs::file_size(cache.entry_path(key_)), DiskCache::kHeaderBytes + key_.size() + payload_.size());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "cuda"), fs::directory_iterator()), 1);
}

TEST_F(DiskCacheTest, SecondInstance_SeesEntry) {
  DiskCache(dir_, ".bin").put(key_, payload_);
  DiskCache other(dir_, ".bin");
  ASSERT_TRUE(other.get(key_).has_value());
  EXPECT_EQ(*other.get(key_), payload_);
}

TEST_F(DiskCacheTest, EmptyPayload_RoundTrips) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, {});
  std::optional<std::vector<std::byte>> got = cache.get(key_);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->empty());
}

TEST_F(DiskCacheTest, OtherKey_Misses) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  EXPECT_FALSE(cache.get(make_cache_key({"kernel", "nvrtc 13.0", "80", "extern \"C\" __global__ void k() {}"})));
}

TEST_F(DiskCacheTest, Overwrite_ReturnsNewPayload) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  cache.put(key_, bytes_of("second"));
  EXPECT_EQ(*cache.get(key_), bytes_of("second"));
}

// Damages the entry with `damage`, then checks that get rejects and deletes it, and that a put
// rebuilds it.
void expect_rejected_then_rebuilt(DiskCache& cache, const std::string& key, const std::vector<std::byte>& payload) {
  EXPECT_FALSE(cache.get(key).has_value());
  EXPECT_EQ(cache.stats().rejected, 1);
  EXPECT_FALSE(fs::exists(cache.entry_path(key)));
  cache.put(key, payload);
  std::optional<std::vector<std::byte>> got = cache.get(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload);
}

TEST_F(DiskCacheTest, CorruptPayloadByte_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file.back() ^= 0x20;
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, TruncatedFile_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file.resize(file.size() - 3);
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, TruncatedInsideHeader_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file.resize(10);
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, EmptyFile_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  write_all(cache.entry_path(key_), {});
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, WrongMagic_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file[0] = 'X';
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, WrongFormatVersion_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file[8] = static_cast<char>(DiskCache::kFormatVersion + 1);
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, AppendedGarbage_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file.push_back('!');
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

// Another key's entry stored under this key's file name (a hash collision) is never returned.
TEST_F(DiskCacheTest, CollidingKey_RejectedAndRebuilt) {
  DiskCache cache(dir_, ".bin");
  const std::string other = make_cache_key({"another kernel"});
  cache.put(other, bytes_of("other payload"));
  fs::rename(cache.entry_path(other), cache.entry_path(key_));
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

// Same length, same file, one key byte changed: the stored key text catches it.
TEST_F(DiskCacheTest, KeyTextMismatch_Rejected) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  std::vector<char> file = read_all(cache.entry_path(key_));
  file[DiskCache::kHeaderBytes] ^= 1;
  write_all(cache.entry_path(key_), file);
  expect_rejected_then_rebuilt(cache, key_, payload_);
}

TEST_F(DiskCacheTest, DirectoryUnderAFile_NoCachingNoThrow) {
  fs::create_directories(dir_);
  write_all(dir_ / "plain_file", {'x'});
  DiskCache cache(dir_ / "plain_file" / "cache", ".bin");
  EXPECT_FALSE(cache.usable());
  EXPECT_NO_THROW(cache.put(key_, payload_));
  EXPECT_FALSE(cache.get(key_).has_value());
  EXPECT_EQ(cache.stats().write_failures, 1);
  EXPECT_EQ(cache.stats().writes, 0);
}

TEST_F(DiskCacheTest, MissingDirectory_CreatedOnFirstPut) {
  DiskCache cache(dir_ / "a" / "b", ".bin");
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  cache.put(key_, payload_);
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b"));
  EXPECT_TRUE(cache.get(key_).has_value());
}

TEST_F(DiskCacheTest, DirectoryRemovedAfterUse_PutFailsQuietly) {
  DiskCache cache(dir_, ".bin");
  cache.put(key_, payload_);
  fs::remove_all(dir_);
  EXPECT_FALSE(cache.get(key_).has_value());
  EXPECT_NO_THROW(cache.put(key_, payload_));
  EXPECT_EQ(cache.stats().write_failures, 1);
  EXPECT_FALSE(cache.usable());
}

TEST_F(DiskCacheTest, ReadOnlyDirectory_NoCachingNoThrow) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(dir_.c_str(), W_OK) == 0)
    GTEST_SKIP() << "running with privileges that ignore directory permissions (root): cannot make " << dir_
                 << " read-only";
  DiskCache cache(dir_, ".bin");
  EXPECT_FALSE(cache.usable());
  EXPECT_NO_THROW(cache.put(key_, payload_));
  EXPECT_FALSE(cache.get(key_).has_value());
  EXPECT_EQ(cache.stats().write_failures, 1);
}

TEST_F(DiskCacheTest, DisabledCache_DoesNothing) {
  DiskCache cache({}, ".bin");
  EXPECT_FALSE(cache.usable());
  cache.put(key_, payload_);
  EXPECT_FALSE(cache.get(key_).has_value());
}

TEST_F(DiskCacheTest, ConcurrentPutsAndGets_NeverSeePartialEntries) {
  DiskCache cache(dir_, ".bin");
  std::vector<std::byte> big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 7);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        cache.put(key_, big);
        std::optional<std::vector<std::byte>> got = cache.get(key_);
        if (got && *got != big) ++bad;
      }
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.stats().rejected, 0);
  EXPECT_EQ(*cache.get(key_), big);
}

TEST(CacheKey, PartsAreUnambiguous) {
  EXPECT_NE(make_cache_key({"ab", "c"}), make_cache_key({"a", "bc"}));
  EXPECT_EQ(make_cache_key({"ab", "c"}), make_cache_key({"ab", "c"}));
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DefaultCacheRoot, EnvironmentOrder) {
  {
    ScopedEnv cache("VF_CACHE_DIR", "/x/vf");
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/xdg");
    EXPECT_EQ(default_cache_root(), fs::path("/x/vf"));
  }
  {
    ScopedEnv cache("VF_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/xdg");
    EXPECT_EQ(default_cache_root(), fs::path("/x/xdg/viewfuse"));
  }
  {
    ScopedEnv cache("VF_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/x/home");
    EXPECT_EQ(default_cache_root(), fs::path("/x/home/.cache/viewfuse"));
  }
  {
    ScopedEnv cache("VF_CACHE_DIR", "/x/vf");
    ScopedEnv disable("VF_DISABLE_DISK_CACHE", "1");
    EXPECT_TRUE(DiskCache::open_default("cuda", ".cubin")->dir().empty());
  }
  {
    ScopedEnv cache("VF_CACHE_DIR", "/x/vf");
    ScopedEnv disable("VF_DISABLE_DISK_CACHE", nullptr);
    EXPECT_EQ(DiskCache::open_default("cuda", ".cubin")->dir(), fs::path("/x/vf/cuda"));
  }
}

TEST(DumpKernelSource, WritesWhenRequested) {
  const fs::path dir = fs::temp_directory_path() / ("vf_dump_test_" + std::to_string(::getpid()));
  {
    ScopedEnv dump("VF_DUMP_KERNELS", nullptr);
    EXPECT_TRUE(dump_kernel_source("k", "source", ".cu").empty());
  }
  {
    ScopedEnv dump("VF_DUMP_KERNELS", dir.c_str());
    fs::path path = dump_kernel_source("k", "source text", ".cu");
    EXPECT_EQ(path, dir / "k.cu");
    std::vector<char> text = read_all(path);
    EXPECT_EQ(std::string(text.begin(), text.end()), "source text");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vf
