#include "segment/explain.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen/kernel_name.h"

namespace vf {

const char* segment_kind_name(SegmentKind kind) {
  switch (kind) {
    case SegmentKind::Alias: return "alias";
    case SegmentKind::Kernel: return "kernel";
    case SegmentKind::Host: return "host";
    case SegmentKind::Library: return "library";
  }
  return "?";
}

const char* view_decision_name(ViewDecision d) {
  switch (d) {
    case ViewDecision::Alias: return "alias";
    case ViewDecision::Index: return "index";
    case ViewDecision::Copy: return "copy";
  }
  return "?";
}

namespace {

std::string op_label(const Node* n) { return std::string(op_name(n->op)) + " " + n->output()->name; }

std::string bytes_text(int64_t b) {
  char buf[32];
  if (b < 1024) return std::to_string(b) + " B";
  if (b < (1 << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else if (b < (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

// text, then spaces to `width`, at least one (a longer text pushes the next column along).
void pad_to(std::ostringstream& out, const std::string& text, size_t width) {
  out << text;
  for (size_t i = text.size(); i < std::max(width, text.size() + 1); ++i) out << ' ';
}

}  // namespace

std::string explain_text(const Fusion& given, const Plan& plan) {
  const Fusion& fusion = plan.planned(given);
  std::ostringstream out;
  out << "plan: " << fusion.inputs().size() << " input(s), " << fusion.outputs().size() << " output(s), "
      << fusion.nodes().size() << " op(s); bookend " << (plan.options.bookend ? "on" : "off") << "\n";
  if (!plan.rewrites.empty()) {
    out << "\nrewrites before planning\n";
    for (const std::string& r : plan.rewrites) out << "  " << r << "\n";
  }
  out << "\nsegments\n";
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    const Segment& s = plan.segments[i];
    std::string head = "  #" + std::to_string(i) + " " + segment_kind_name(s.kind);
    pad_to(out, head, 13);
    std::string ops;
    for (const Node* n : s.nodes) ops += (ops.empty() ? "" : ", ") + op_label(n);
    if (s.kind == SegmentKind::Alias) {
      // What each materialised value is: a view of some storage, or an empty buffer.
      std::string views;
      for (const Value* v : s.views) {
        const Placement& p = plan.placement[v->id];
        views += (views.empty() ? "" : ", ") + v->name +
                 (p.storage == v ? " = empty buffer" : " = view of " + p.storage->name);
      }
      out << (ops.empty() ? views : ops + "\n" + std::string(13, ' ') + views) << "\n";
      continue;
    }
    out << ops << "\n";
    if (s.kernel) {
      pad_to(out, "", 13);
      out << "kernel " << kernel_name(*s.fusion, *s.kernel) << "\n";
    }
    pad_to(out, "", 13);
    out << "reads " << bytes_text(s.bytes_read) << ", writes " << bytes_text(s.bytes_written) << " (";
    for (size_t k = 0; k < s.outputs.size(); ++k) out << (k ? ", " : "") << s.outputs[k]->name;
    out << ")\n";
    if (!s.note.empty()) {
      pad_to(out, "", 13);
      out << s.note << "\n";
    }
  }
  if (!plan.view_ops.empty()) {
    out << "\nview ops\n";
    for (const ViewOpPlan& v : plan.view_ops) {
      out << "  ";
      pad_to(out, op_label(v.node), 24);
      pad_to(out, view_decision_name(v.decision), 7);
      out << v.reason << "\n";
    }
  }
  out << "\noutputs\n";
  for (const OutputPlan& o : plan.outputs) {
    out << "  ";
    pad_to(out, o.value->name, 10);
    pad_to(out, o.value->type_string(), 22);
    pad_to(out, "strides " + shape_to_string(o.layout.strides), 28);
    out << (o.alias_of ? "alias of " + o.alias_of->name : std::string("own buffer")) << "\n";
  }
  out << "\nmemory: " << plan.kernel_count() << " kernel launch(es), " << plan.allocated_bytes
      << " bytes allocated, peak " << plan.peak_bytes << " bytes\n";
  return out.str();
}

nlohmann::json explain_json(const Fusion&, const Plan& plan) {
  using nlohmann::json;
  json j;
  j["bookend"] = plan.options.bookend;
  if (!plan.rewrites.empty()) j["rewrites"] = plan.rewrites;
  j["kernels"] = plan.kernel_count();
  j["allocated_bytes"] = plan.allocated_bytes;
  j["peak_bytes"] = plan.peak_bytes;
  j["outputs"] = json::array();
  for (const OutputPlan& o : plan.outputs)
    j["outputs"].push_back({{"name", o.value->name},
                            {"shape", o.value->shape},
                            {"strides", o.layout.strides},
                            {"dtype", std::string(dtype_short_name(o.value->dtype))},
                            {"alias_of", o.alias_of ? json(o.alias_of->name) : json(nullptr)}});
  j["segments"] = json::array();
  for (const Segment& s : plan.segments) {
    json ops = json::array();
    for (const Node* n : s.nodes) ops.push_back(op_label(n));
    j["segments"].push_back({{"kind", segment_kind_name(s.kind)},
                             {"kernel_name", s.kernel ? json(kernel_name(*s.fusion, *s.kernel)) : json(nullptr)},
                             {"ops", ops},
                             {"bytes_read", s.bytes_read},
                             {"bytes_written", s.bytes_written},
                             {"note", s.note}});
  }
  j["view_ops"] = json::array();
  for (const ViewOpPlan& v : plan.view_ops)
    j["view_ops"].push_back({{"name", v.node->output()->name},
                             {"op", std::string(op_name(v.node->op))},
                             {"decision", view_decision_name(v.decision)},
                             {"reason", v.reason}});
  return j;
}

}  // namespace vf
