// Compiling CUDA C++ source to CUBIN (or PTX) with NVRTC.
#include "runtime/nvrtc_compiler.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/error.h"
#include "runtime/cuda_api.h"

namespace vf {
namespace {

// Destroys the program on every path out of nvrtc_compile.
class ProgramGuard {
 public:
  ProgramGuard(const NvrtcApi& api, nvrtcProgram program) : api_(api), program_(program) {}
  ~ProgramGuard() { api_.nvrtcDestroyProgram(&program_); }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_;
};

std::vector<int> supported_archs(const NvrtcApi& api) {
  std::vector<int> archs;
  int count = 0;
  if (!api.nvrtcGetNumSupportedArchs || !api.nvrtcGetSupportedArchs) return archs;
  if (api.nvrtcGetNumSupportedArchs(&count) != kNvrtcSuccess || count <= 0) return archs;
  archs.resize(static_cast<size_t>(count));
  if (api.nvrtcGetSupportedArchs(archs.data()) != kNvrtcSuccess) archs.clear();
  return archs;
}

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != kNvrtcSuccess || size == 0) return {};
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != kNvrtcSuccess) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Writes the failing source where the user can read it; returns the path, or a note why not.
std::string save_failed_source(std::string_view source, std::string_view name) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(XXH64(source.data(), source.size(), 0)));
  std::filesystem::path path = dir / ("viewfuse-failed-" + std::string(name) + "-" + hash + ".cu");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(source.data(), static_cast<std::streamsize>(source.size()));
  out.close();
  if (!out) return "(could not be saved to " + path.string() + ")";
  return path.string();
}

}  // namespace

NvrtcTarget nvrtc_target_for(int cc_major, int cc_minor, const std::vector<int>& supported) {
  const int device_arch = cc_major * 10 + cc_minor;
  if (supported.empty() || std::find(supported.begin(), supported.end(), device_arch) != supported.end())
    return {device_arch, true};
  int best = 0;
  for (int arch : supported)
    if (arch <= device_arch) best = std::max(best, arch);
  if (best == 0)
    throw DeviceError(detail::concat("the GPU (sm_", device_arch, ") is older than every architecture this NVRTC (",
                                     nvrtc_version_string(), ") compiles for; the oldest is sm_",
                                     *std::min_element(supported.begin(), supported.end())));
  return {best, false};
}

std::string nvrtc_version_string() {
  const NvrtcApi& api = nvrtc_api();
  return detail::concat("nvrtc ", api.major, ".", api.minor);
}

CompiledCuda nvrtc_compile(std::string_view source, std::string_view name, int cc_major, int cc_minor,
                           const NvrtcOptions& options) {
  const NvrtcApi& api = nvrtc_api();
  NvrtcTarget target = nvrtc_target_for(cc_major, cc_minor, supported_archs(api));
  if (options.ptx_only) target.cubin = false;
  CompiledCuda result;
  result.is_cubin = target.cubin;
  result.arch = detail::concat(target.cubin ? "sm_" : "compute_", target.arch);

  const std::string source_text(source);
  const std::string name_text = std::string(name) + ".cu";
  nvrtcProgram program = nullptr;
  nvrtc_check(api.nvrtcCreateProgram(&program, source_text.c_str(), name_text.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  ProgramGuard guard(api, program);

  const std::string arch_option = "--gpu-architecture=" + result.arch;
  std::vector<const char*> argv = {arch_option.c_str(), "--std=c++17", "-default-device"};
  if (options.line_info) argv.push_back("-lineinfo");
  if (options.ptxas_report) argv.push_back("--ptxas-options=-v");
  nvrtcResult compiled = api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (compiled != kNvrtcSuccess) {
    std::string log = program_log(api, program);
    const char* error = api.nvrtcGetErrorString(compiled);
    throw DeviceError(detail::concat("NVRTC failed to compile kernel ", name, " for ", result.arch, " (",
                                     error ? error : "error", "):\n", log,
                                     "\nthe failing source is saved at ", save_failed_source(source, name)));
  }

  result.log = program_log(api, program);
  size_t size = 0;
  if (target.cubin) {
    nvrtc_check(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    result.image.resize(size);
    nvrtc_check(api.nvrtcGetCUBIN(program, reinterpret_cast<char*>(result.image.data())), "nvrtcGetCUBIN");
  } else {
    nvrtc_check(api.nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
    result.image.resize(size);
    nvrtc_check(api.nvrtcGetPTX(program, reinterpret_cast<char*>(result.image.data())), "nvrtcGetPTX");
  }
  return result;
}

}  // namespace vf
