// When a prepared kernel switches to its size-specialized kernel, and the switch at each launch.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>

#include "base/error.h"
#include "codegen/pack_launch.h"
#include "codegen/specialize_kernel.h"

namespace vf {

// When a prepared kernel makes its size-specialized kernel (codegen/specialize_kernel.h): never; on
// a thread of its own after the kernel's second launch, launches taking the generic kernel until
// the specialized one is loaded; or at the first launch, on the launching thread (for tests, which
// then check every kernel specialized).
enum class SpecializeMode { Off, Background, Now };

// The mode VF_SPECIALIZE names (off, background, now); `unset` when it is unset or empty. UserError
// naming the value otherwise.
SpecializeMode specialize_mode_from_env(SpecializeMode unset);

// A backend's counts of what its specializers did.
struct SpecializeStats {
  std::atomic<int64_t> made{0};      // specialized kernels loaded (compiled or from the disk cache)
  std::atomic<int64_t> compiled{0};  // ... of them compiled
  std::atomic<int64_t> launches{0};  // launches that took a specialized kernel
  std::atomic<int64_t> failures{0};  // background specializations that threw (their launches stay generic)
};

// The specialization state of one prepared kernel, whose loaded form is `Loaded` (a CudaKernel, a
// CPU module). `load` turns a generated kernel into a loaded one (through the backend's caches; it
// reports whether it compiled) and must stay valid while the Specializer lives; the destructor waits
// for a background specialization.
template <class Loaded>
class Specializer {
 public:
  using Load = std::function<std::shared_ptr<const Loaded>(const GeneratedKernel&, bool& compiled)>;

  Specializer(SpecializeMode mode, Load load, SpecializeStats& stats)
      : mode_(mode), load_(std::move(load)), stats_(stats) {}
  ~Specializer() {
    if (background_.valid()) background_.wait();
  }
  Specializer(const Specializer&) = delete;
  Specializer& operator=(const Specializer&) = delete;

  // The specialized kernel for `block` (packed for `generic`) when there is one and it computes
  // this launch (specialization_matches); else null, the launch taking the generic kernel. Counts
  // the launches until one triggers the specialization. Thread-safe; no allocation once the
  // specialization is made.
  const Loaded* pick(const GeneratedKernel& generic, const LaunchBlock& block) const {
    if (const Made* m = made_.load(std::memory_order_acquire)) {
      if (!specialization_matches(m->generated, block)) return nullptr;
      ++stats_.launches;
      return m->loaded.get();
    }
    if (mode_ == SpecializeMode::Off) return nullptr;
    const int64_t launch = launches_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (launch != (mode_ == SpecializeMode::Now ? 1 : 2)) return nullptr;
    std::lock_guard lock(mutex_);
    if (mode_ == SpecializeMode::Now) {
      make(generic, block);
      ++stats_.launches;
      return owned_->loaded.get();
    }
    background_ = std::async(std::launch::async, [this, &generic, copy = block] {
      try {
        make(generic, copy);
      } catch (const Error&) {
        ++stats_.failures;  // a code-generation bug, which the tests find in Now mode
      }
    });
    return nullptr;
  }

 private:
  struct Made {
    GeneratedKernel generated;
    std::shared_ptr<const Loaded> loaded;
  };

  void make(const GeneratedKernel& generic, const LaunchBlock& block) const {
    auto m = std::make_unique<Made>();
    m->generated = specialize_kernel(generic, block);
    bool compiled = false;
    m->loaded = load_(m->generated, compiled);
    stats_.compiled += compiled;
    ++stats_.made;
    owned_ = std::move(m);
    made_.store(owned_.get(), std::memory_order_release);
  }

  SpecializeMode mode_;
  Load load_;
  SpecializeStats& stats_;
  mutable std::atomic<int64_t> launches_{0};
  mutable std::atomic<const Made*> made_{nullptr};
  mutable std::mutex mutex_;  // taken by the launch that specializes
  mutable std::unique_ptr<Made> owned_;
  mutable std::future<void> background_;
};

}  // namespace vf
