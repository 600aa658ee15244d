// Compiling CUDA C++ source to device code with NVRTC.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vf {

struct NvrtcOptions {
  bool line_info = false;     // -lineinfo, for profilers
  bool ptxas_report = false;  // ptxas -v: registers, spills and shared memory per kernel, in the log
  // PTX (compute_XX) even where NVRTC could make a CUBIN: its front end and optimizer without
  // ptxas, half the time, for checks that a generated source compiles (the fuzz tests).
  bool ptx_only = false;
};

// The result of one compile: CUBIN machine code for the requested architecture, or PTX when
// NVRTC is older than the device (then the driver JIT-compiles it at module load).
struct CompiledCuda {
  std::vector<std::byte> image;  // CUBIN (an ELF file), or PTX text with its terminating NUL
  bool is_cubin = true;
  std::string arch;  // "sm_90", or "compute_90" for PTX
  std::string log;   // NVRTC's log of a successful compile (warnings; ptxas's report when asked)
};

// Compiles `source` (a self-contained translation unit) for compute capability major.minor.
// Throws DeviceError when NVRTC is missing, and on a compile error with NVRTC's log and the path
// of a file holding the failing source (saved under the temporary directory).
CompiledCuda nvrtc_compile(std::string_view source, std::string_view name, int cc_major, int cc_minor,
                           const NvrtcOptions& options = {});

// "nvrtc 13.0" for the loaded NVRTC; part of the kernel cache key. Throws when NVRTC is missing.
std::string nvrtc_version_string();

// The architecture NVRTC compiles for on a device of compute capability major.minor: the device's
// own when supported, else the newest supported one below it (as PTX). Exposed for tests.
struct NvrtcTarget {
  int arch = 0;  // 90 for sm_90
  bool cubin = true;
};
NvrtcTarget nvrtc_target_for(int cc_major, int cc_minor, const std::vector<int>& supported_archs);

}  // namespace vf
