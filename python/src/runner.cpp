#include "runner.h"

#include <mutex>

#include <nanobind/stl/string.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "ir/print_trace.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "segment/explain.h"

namespace vf::py {

std::shared_ptr<Backend> backend_for(Device device, int device_id) {
  static std::mutex mutex;
  static auto* backends = new std::map<std::pair<int, int>, std::shared_ptr<Backend>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*backends)[{static_cast<int>(device), device_id}];
  if (!slot) {
    if (device == Device::Cuda)
      slot = std::make_shared<CudaBackend>(device_id);
    else
      slot = std::make_shared<CpuBackend>();
  }
  return slot;
}

std::vector<Arg> Runner::wrap(nb::handle inputs, CallInfo& info) {
  PyObject* seq = PySequence_Fast(inputs.ptr(), "execute takes a list or tuple of inputs");
  if (!seq) throw nb::python_error();
  nb::object keep = nb::steal(seq);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  std::vector<Arg> args;
  args.reserve(static_cast<size_t>(n));
  info.key.reserve(static_cast<size_t>(n) * 6 + 2);
  info.key.push_back(0);  // device, filled in below
  info.key.push_back(0);
  for (Py_ssize_t i = 0; i < n; ++i) args.push_back(wrap_argument(items[i], info));
  info.key[0] = static_cast<int64_t>(info.device);
  info.key[1] = info.device_id;
  if (info.torch_attribute_path) info.torch_api = nullptr;  // one path for the whole call
  return args;
}

CompiledFusion& Runner::compiled(const std::vector<Arg>& args, const CallInfo& info) {
  if (last_ && info.key == last_key_) return *last_;
  auto it = cache_.find(info.key);
  if (it == cache_.end()) {
    nb::list shapes, dtypes;
    for (const Arg& a : args) {
      if (const Tensor* t = std::get_if<Tensor>(&a)) {
        nb::list shape;
        for (int64_t s : t->layout.sizes) shape.append(s);
        shapes.append(nb::tuple(shape));
        dtypes.append(std::string(dtype_long_name(t->dtype)));
      } else {
        shapes.append(nb::none());
        dtypes.append(scalar_kind_name(std::get<Scalar>(a).kind));
      }
    }
    std::string text = nb::cast<std::string>(builder_(shapes, dtypes));
    auto fusion = std::make_shared<const Fusion>(read_trace(text, "<fusion>"));
    ExecutorOptions options;
    options.device = info.device;
    options.plan = plan_options_;
    auto cf = std::make_shared<CompiledFusion>(std::move(fusion), options, backend_for(info.device, info.device_id));
    it = cache_.emplace(info.key, std::move(cf)).first;
  }
  last_key_ = info.key;
  last_ = it->second.get();
  return *last_;
}

nb::list Runner::run(nb::handle inputs) {
  CallInfo info;
  std::vector<Arg> args = wrap(inputs, info);
  CompiledFusion& cf = compiled(args, info);
  std::vector<Tensor> outputs;
  if (info.torch) {
    RunHooks hooks;
    hooks.allocate = [&info](DType dtype, const Layout& layout, int64_t bytes) {
      return torch_buffer(dtype, layout, bytes, info);
    };
    hooks.stream = torch_current_stream(info);
    outputs = cf.run(args, hooks);
  } else {
    outputs = cf.run(args);
  }
  // PyList_New(n) and no append: the list's item array is allocated once.
  nb::list result = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(outputs.size())));
  if (!result.is_valid()) throw nb::python_error();
  for (size_t i = 0; i < outputs.size(); ++i)
    PyList_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i), to_python(outputs[i], info).release().ptr());
  return result;
}

std::string Runner::explain_json(nb::handle inputs) {
  CallInfo info;
  std::vector<Arg> args = wrap(inputs, info);
  CompiledFusion& cf = compiled(args, info);
  return vf::explain_json(cf.fusion(), cf.plan_for(args)).dump();
}

std::string Runner::explain_text(nb::handle inputs) {
  CallInfo info;
  std::vector<Arg> args = wrap(inputs, info);
  CompiledFusion& cf = compiled(args, info);
  return vf::explain_text(cf.fusion(), cf.plan_for(args));
}

std::string Runner::trace(nb::handle inputs) {
  CallInfo info;
  std::vector<Arg> args = wrap(inputs, info);
  return print_trace(compiled(args, info).fusion(), "fusion");
}

}  // namespace vf::py
