// The _viewfuse extension module: error types, the op list, trace reading, the Runner, the torch path.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "base/error.h"
#include "frontend/lower_call.h"
#include "frontend/trace_reader.h"
#include "ir/print_trace.h"
#include "runner.h"
#include "torch_path.h"

namespace nb = nanobind;

namespace {

// {"name", "category", num_outputs} for every op of ops.def.
nb::list op_table() {
  nb::list out;
#define VF_OP(name, prim, category)                                                                  \
  out.append(nb::make_tuple(prim, vf::op_category_name(vf::OpCategory::category),                    \
                            vf::op_num_outputs(vf::OpKind::name)));
#include "ir/ops.def"
#undef VF_OP
  return out;
}

// {"dtypes": [(long name, short name, bytes)] in DType order, "aliases": {alias: long name}}: the
// dtype names the trace reader knows (base/dtype.h).
nb::dict dtype_table() {
  nb::list dtypes;
  for (int i = 0; i < vf::kNumDTypes; ++i) {
    const auto d = static_cast<vf::DType>(i);
    dtypes.append(nb::make_tuple(std::string(vf::dtype_long_name(d)), std::string(vf::dtype_short_name(d)),
                                 vf::dtype_size(d)));
  }
  nb::dict aliases;
  for (const vf::DTypeAlias& a : vf::dtype_aliases())
    aliases[nb::str(a.name.data(), a.name.size())] = std::string(vf::dtype_long_name(a.dtype));
  nb::dict d;
  d["dtypes"] = dtypes;
  d["aliases"] = aliases;
  return d;
}

// [(name, callee)] for every torch-level spelling the trace reader accepts (frontend/lower_call.h).
nb::list torch_spellings() {
  nb::list out;
  for (const vf::TorchSpelling& s : vf::torch_spellings())
    out.append(nb::make_tuple(std::string(s.name), s.callee, s.outputs));
  return out;
}

// The inputs and outputs of a trace: {"inputs": [(name, dtype or scalar kind, shape or None)],
// "outputs": [(name, dtype, shape)], "trace": the trace printed back}.
nb::dict describe_trace(const std::string& text, const std::string& filename) {
  vf::Fusion fusion = vf::read_trace(text, filename);
  auto describe = [](const vf::Value* v) {
    if (!v->is_tensor) return nb::make_tuple(v->name, vf::scalar_kind_name(v->scalar_kind), nb::none());
    nb::list shape;
    for (int64_t s : v->shape) shape.append(s);
    return nb::make_tuple(v->name, std::string(vf::dtype_long_name(v->dtype)), nb::tuple(shape));
  };
  nb::list inputs, outputs;
  for (const vf::Value* v : fusion.inputs()) inputs.append(describe(v));
  for (const vf::Value* v : fusion.outputs()) outputs.append(describe(v));
  nb::dict d;
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["trace"] = vf::print_trace(fusion, "fusion");
  return d;
}

}  // namespace

NB_MODULE(_viewfuse, m) {
  m.doc() = "viewfuse's C++ core: trace reading, planning, code generation and execution";
  // Runners held by module-level caches (the Thunder executor's) live until the interpreter's end,
  // after nanobind's leak check would run: its warnings would name live objects, not leaks.
  nb::set_leak_warnings(false);

  nb::object base = nb::module_::import_("builtins").attr("RuntimeError");
  static nb::exception<vf::Error> error(m, "Error", base);
  static nb::exception<vf::UserError> user_error(m, "UserError", error);
  static nb::exception<vf::TraceError> trace_error(m, "TraceError", user_error);
  static nb::exception<vf::DeviceError> device_error(m, "DeviceError", error);
  static nb::exception<vf::InternalError> internal_error(m, "InternalError", error);

  m.def("op_table", &op_table);
  m.def("dtype_table", &dtype_table);
  m.def("torch_spellings", &torch_spellings);
  m.def("describe_trace", &describe_trace, nb::arg("text"), nb::arg("filename") = "<trace>");
  m.def("torch_path_status", [] {
    auto [fast, reason] = vf::py::torch_path_status();
    return nb::make_tuple(fast, reason);
  });
  m.def("_set_torch_fast_path", &vf::py::set_torch_fast_path, nb::arg("enabled"));

  nb::class_<vf::py::Runner>(m, "Runner")
      .def(nb::init<nb::object, bool, bool, bool, bool>(), nb::arg("builder"), nb::arg("bookend") = false,
           nb::arg("keep_round_trips") = false, nb::arg("deterministic") = false, nb::arg("matmul_epilogues") = true)
      .def("run", &vf::py::Runner::run, nb::arg("inputs"))
      .def("__call__", [](vf::py::Runner& r, nb::args args) { return r.run(args); })
      .def("explain_json", &vf::py::Runner::explain_json, nb::arg("inputs"))
      .def("explain_text", &vf::py::Runner::explain_text, nb::arg("inputs"))
      .def("trace", &vf::py::Runner::trace, nb::arg("inputs"))
      .def_prop_ro("cache_size", &vf::py::Runner::cache_size)
      .def_prop_ro("bookend", &vf::py::Runner::bookend)
      .def_prop_ro("keep_round_trips", &vf::py::Runner::keep_round_trips)
      .def_prop_ro("deterministic", &vf::py::Runner::deterministic)
      .def_prop_ro("matmul_epilogues", &vf::py::Runner::matmul_epilogues);
}
