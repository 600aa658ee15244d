#include "torch_path.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace vf::py {

namespace nb = nanobind;

namespace {

struct TorchPath {
  bool loaded = false;  // load() has run
  bool enabled = true;
  const TorchApi* api = nullptr;
  std::string reason;
};

TorchPath& torch_path() {
  static TorchPath* path = new TorchPath;  // kept for the process, like the module it points into
  return *path;
}

void load(TorchPath& path) {
  path.loaded = true;
  path.reason = "attribute path: viewfuse._torch_path.load() failed";
  nb::tuple result = nb::cast<nb::tuple>(nb::module_::import_("viewfuse._torch_path").attr("load")());
  path.reason = nb::cast<std::string>(result[1]);
  nb::handle capsule = result[0];
  if (capsule.is_none()) return;
  auto* api = static_cast<const TorchApi*>(PyCapsule_GetPointer(capsule.ptr(), kTorchApiCapsuleName));
  if (api == nullptr) {
    PyErr_Clear();
    path.reason = "attribute path: viewfuse._torch_fast's capsule is not a TorchApi table";
  } else if (api->version != kTorchApiVersion || api->size != sizeof(TorchApi)) {
    path.reason = "attribute path: viewfuse._torch_fast has TorchApi version " + std::to_string(api->version) +
                  ", _viewfuse expects " + std::to_string(kTorchApiVersion) + " (a mixed installation)";
  } else {
    path.api = api;  // the module stays imported (sys.modules), so the table stays valid
  }
}

}  // namespace

const TorchApi* torch_api() {
  TorchPath& path = torch_path();
  if (!path.loaded) load(path);
  return path.enabled ? path.api : nullptr;
}

std::pair<bool, std::string> torch_path_status() {
  TorchPath& path = torch_path();
  if (!path.loaded) load(path);
  if (path.api != nullptr && !path.enabled) return {false, "attribute path: the fast path is turned off"};
  return {path.api != nullptr, path.reason};
}

bool set_torch_fast_path(bool enabled) {
  TorchPath& path = torch_path();
  bool previous = path.enabled;
  path.enabled = enabled;
  return previous;
}

}  // namespace vf::py
