#include "tools/viewfuse/backends.h"

#include "base/error.h"

namespace vf::tool {

std::shared_ptr<Backend> make_backend(Device device) {
  if (device == Device::Cuda) throw DeviceError("--device cuda is not wired into the tool yet");
  return nullptr;  // kernel segments run through the reference executor
}

std::vector<Arg> upload(const std::vector<HostArg>& args, Device device) {
  std::vector<Arg> out;
  for (const HostArg& a : args) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      out.push_back(to_tensor(*t));
    else
      out.push_back(std::get<Scalar>(a));
  }
  return out;
}

std::vector<HostTensor> download(const std::vector<Tensor>& tensors) {
  std::vector<HostTensor> out;
  for (const Tensor& t : tensors) out.push_back(as_host_tensor(t));
  return out;
}

std::string kernel_source(const KernelSpec& spec, Target target) {
  return "// code generation is not wired into the tool yet\n";
}

}  // namespace vf::tool
