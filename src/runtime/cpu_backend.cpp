// The CPU backend: compile generated C++ with the host compiler, dlopen it, run it in parallel.
#include "runtime/cpu_backend.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <thread>

#include "base/error.h"
#include "codegen/pack_launch.h"
#include "runtime/specializer.h"

namespace vf {

using CpuEntry = void (*)(const void* args, int64_t begin, int64_t end);

// A loaded shared object holding one kernel.
struct CpuModule {
  std::string source;
  void* handle = nullptr;
  CpuEntry entry = nullptr;
  ~CpuModule() {
    if (handle) dlclose(handle);
  }
};

// Workers that split [0, extent) into chunks; the calling thread takes chunks too.
class CpuThreadPool {
 public:
  explicit CpuThreadPool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~CpuThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int workers() const { return static_cast<int>(threads_.size()); }

  void run(CpuEntry entry, const void* args, int64_t extent) {
    std::lock_guard<std::mutex> one_at_a_time(run_mutex_);
    Job job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = Job{entry, args, extent, std::min<int64_t>(extent, int64_t{4} * (workers() + 1)), ++generation_};
      next_.store(claim(job_.generation, 0));
      pending_ = job_.chunks;
      job = job_;
    }
    wake_.notify_all();
    take_chunks(job);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  // One run's work, copied by each thread under the mutex.
  struct Job {
    CpuEntry entry = nullptr;
    const void* args = nullptr;
    int64_t extent = 0, chunks = 0;
    uint64_t generation = 0;
  };
  // next_ holds the run's generation (high 32 bits) and its next unclaimed chunk (low 32 bits), so
  // that a worker still looping after its run ends never claims a chunk of the next run.
  static uint64_t claim(uint64_t generation, int64_t chunk) {
    return (generation << 32) | static_cast<uint64_t>(chunk);
  }

  void take_chunks(const Job& job) {
    uint64_t v = next_.load();
    for (;;) {
      const auto c = static_cast<int64_t>(v & 0xffffffffu);
      if (v >> 32 != (job.generation & 0xffffffffu) || c >= job.chunks) return;
      if (!next_.compare_exchange_weak(v, v + 1)) continue;
      job.entry(job.args, job.extent * c / job.chunks, job.extent * (c + 1) / job.chunks);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_.notify_all();
      }
      v = next_.load();
    }
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      take_chunks(job);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex run_mutex_, mutex_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  uint64_t generation_ = 0;  // guarded by mutex_, as are job_ and pending_
  Job job_;
  int64_t pending_ = 0;
  std::atomic<uint64_t> next_{0};
};

namespace {

class CpuPreparedKernel : public PreparedKernel {
 public:
  CpuPreparedKernel(std::shared_ptr<const CpuModule> module, GeneratedKernel kernel, std::shared_ptr<CpuThreadPool> pool,
                    int64_t inline_extent, SpecializeMode mode, Specializer<CpuModule>::Load load,
                    SpecializeStats& stats)
      : module_(std::move(module)), kernel_(std::move(kernel)), pool_(std::move(pool)), inline_extent_(inline_extent),
        specializer_(mode, std::move(load), stats) {
    for (const AbiField& f : kernel_.abi.fields)
      if (f.kind == AbiFieldKind::IndexError) error_offset_ = static_cast<int64_t>(f.offset);
  }

  void launch(const KernelArgs& args) const override {
    thread_local LaunchBlock block;
    pack_launch(kernel_, args, 0, block);
    const int64_t extent = block.cpu_extent;
    // A scatter's output starts as its base (kernel_ir.h LoopNest::scatter).
    for (const auto& f : kernel_.abi.filled_outputs) {
      const KernelBuffer& out = args.outputs[static_cast<size_t>(f.output)];
      const int64_t count = out.layout->storage_extent();
      auto* bytes = static_cast<unsigned char*>(out.data);
      if (f.bits == 0) {
        if (count > 0) std::memset(bytes, 0, static_cast<size_t>(count * f.element));
        continue;
      }
      for (int64_t e = 0; e < count; ++e)  // little-endian: the low `element` bytes of bits
        std::memcpy(bytes + e * f.element, &f.bits, static_cast<size_t>(f.element));
    }
    if (extent <= 0) return;
    const CpuModule* module = specializer_.pick(kernel_, block);
    if (!module) module = module_.get();
    // A kernel with gathers records the first index out of range here (prelude_cpu.inc vf_gathered).
    int64_t error[2] = {-1, 0};
    if (error_offset_ >= 0) {
      void* slot = error;
      std::memcpy(block.args.data() + error_offset_, &slot, sizeof slot);
    }
    if (extent < inline_extent_ || pool_->workers() == 0)
      module->entry(block.args.data(), 0, extent);
    else
      pool_->run(module->entry, block.args.data(), extent);
    if (error[0] >= 0)
      VF_USER_ERROR(kernel_.abi.gathers.at(static_cast<size_t>(error[0])), ": index ", error[1], " is out of range");
  }

 private:
  std::shared_ptr<const CpuModule> module_;
  GeneratedKernel kernel_;
  std::shared_ptr<CpuThreadPool> pool_;
  int64_t inline_extent_;
  int64_t error_offset_ = -1;  // the IndexError field's offset in the argument block, if any
  Specializer<CpuModule> specializer_;  // last: waits for a background specialization that reads kernel_
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  VF_INTERNAL_CHECK(out.good(), "cannot write ", path);
}

// Runs a shell command, returning its exit status and its combined output.
int run_command(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string hex(size_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016zx", h);
  return buf;
}

}  // namespace

CpuBackend::CpuBackend(CpuBackendOptions options)
    : options_(std::move(options)),
      specialize_(options_.specialize ? *options_.specialize : specialize_mode_from_env(SpecializeMode::Off)) {
  if (options_.dump_dir.empty())
    if (const char* dump = std::getenv("VF_DUMP_KERNELS")) options_.dump_dir = dump;
  if (!options_.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.dump_dir, ec);
    VF_USER_CHECK(!ec, "VF_DUMP_KERNELS / CpuBackendOptions::dump_dir: cannot create directory '", options_.dump_dir,
                  "': ", ec.message());
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "vf_cpu_kernels_XXXXXX").string();
  VF_INTERNAL_CHECK(mkdtemp(tmpl.data()) != nullptr, "cannot create a temporary directory from ", tmpl);
  work_dir_ = tmpl;
  disk_ = std::make_unique<DiskCache>(std::filesystem::path(options_.cache_dir), ".so");
  int threads = options_.num_threads > 0 ? options_.num_threads
                                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_shared<CpuThreadPool>(threads - 1);
}

CpuBackend::~CpuBackend() {
  std::error_code ec;
  std::filesystem::remove_all(work_dir_, ec);
}

int64_t CpuBackend::compile_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compile_count_;
}

int64_t CpuBackend::disk_hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return disk_hits_;
}

std::string CpuBackend::default_cache_dir() {
  const char* disable = std::getenv("VF_DISABLE_DISK_CACHE");
  const std::filesystem::path root = default_cache_root();
  if ((disable && std::strcmp(disable, "1") == 0) || root.empty()) return {};
  return (root / "cpu").string();
}

std::string CpuBackend::cache_key(const std::string& source, const std::string& entry) {
  if (compiler_identity_.empty()) {
    std::string version;
    const int status = run_command(options_.compiler + " --version", version);
    struct utsname host {};
    uname(&host);
    compiler_identity_ = detail::concat("status ", status, "\n", version, "host ", host.machine);
  }
  return make_cache_key({"viewfuse cpu kernel", compiler_identity_, options_.compiler, options_.flags, entry, source});
}

std::shared_ptr<CpuModule> CpuBackend::load_image(const std::vector<std::byte>& image, const std::string& source,
                                                  const std::string& entry, size_t hash) {
  const std::string so = work_dir_ + "/vf_" + hex(hash) + "_cached_" + std::to_string(files_++) + ".so";
  {
    std::ofstream out(so, std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!out.good()) return nullptr;
  }
  auto module = std::make_shared<CpuModule>();
  module->source = source;
  module->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module->handle) return nullptr;
  module->entry = reinterpret_cast<CpuEntry>(dlsym(module->handle, entry.c_str()));
  if (!module->entry) return nullptr;
  return module;
}

std::shared_ptr<CpuModule> CpuBackend::compile(const std::string& source, const std::string& entry, size_t hash,
                                               bool& compiled) {
  std::string key;
  if (disk_->usable()) {
    key = cache_key(source, entry);
    if (std::optional<std::vector<std::byte>> image = disk_->get(key)) {
      // An entry that passed the cache's checks but does not load (written by another build of
      // the compiler or libc, say) is rebuilt below and overwritten.
      if (std::shared_ptr<CpuModule> module = load_image(*image, source, entry, hash)) {
        ++disk_hits_;
        return module;
      }
    }
  }
  const std::string stem = work_dir_ + "/vf_" + hex(hash) + "_" + std::to_string(files_++);
  const std::string cpp = stem + ".cpp", so = stem + ".so";
  write_file(cpp, source);
  std::string output;
  const std::string command = options_.compiler + " " + options_.flags + " -o '" + so + "' '" + cpp + "'";
  const int status = run_command(command, output);
  if (status != 0) {
    // Keep the source where it can be read after the backend is gone.
    const std::string kept = (std::filesystem::temp_directory_path() / ("vf_failed_" + hex(hash) + ".cpp")).string();
    std::error_code ec;
    std::filesystem::copy_file(cpp, kept, std::filesystem::copy_options::overwrite_existing, ec);
    throw InternalError(detail::concat("CPU kernel compilation failed (exit status ", status, ") for ", kept,
                                       "\ncommand: ", command, "\n", output));
  }
  auto module = std::make_shared<CpuModule>();
  module->source = source;
  module->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  VF_INTERNAL_CHECK(module->handle != nullptr, "dlopen of ", so, " failed: ", dlerror());
  module->entry = reinterpret_cast<CpuEntry>(dlsym(module->handle, entry.c_str()));
  VF_INTERNAL_CHECK(module->entry != nullptr, "kernel entry ", entry, " not found in ", so);
  compiled = true;
  if (!key.empty()) {
    std::ifstream in(so, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.good() || in.eof()) disk_->put(key, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  }
  return module;
}

std::shared_ptr<const CpuModule> CpuBackend::module_for(const GeneratedKernel& kernel, bool& compiled) {
  const size_t hash = std::hash<std::string>{}(kernel.source);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!options_.dump_dir.empty())
    write_file(options_.dump_dir + "/vf_cpu_" + (kernel.baked.empty() ? "" : "specialized_") +
                   std::to_string(dump_count_++) + "_" + hex(hash) + ".cpp",
               kernel.source);
  auto& bucket = modules_[hash];
  for (const auto& m : bucket)
    if (m->source == kernel.source) return m;
  std::shared_ptr<CpuModule> module = compile(kernel.source, kernel.entry, hash, compiled);
  bucket.push_back(module);
  if (compiled && kernel.baked.empty()) ++compile_count_;  // a specialized kernel's compile is in specialized_
  return module;
}

std::shared_ptr<const PreparedKernel> CpuBackend::prepare(const KernelSpec& spec, const KernelIR& ir) {
  GeneratedKernel kernel = generate_kernel(spec, ir, Target::Cpu);
  bool compiled = false;
  std::shared_ptr<const CpuModule> module = module_for(kernel, compiled);
  auto load = [this](const GeneratedKernel& k, bool& c) { return module_for(k, c); };
  return std::make_shared<CpuPreparedKernel>(std::move(module), std::move(kernel), pool_, options_.inline_extent,
                                             specialize_, load, specialized_);
}

}  // namespace vf
