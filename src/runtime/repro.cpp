// Repro files: writing a fusion and its input layouts as a trace, and reading the layouts back.
#include "runtime/repro.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "ir/print_trace.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLayoutPrefix = "# layout ";
constexpr std::string_view kSeedPrefix = "# values: seed ";

// Parses "[1, 2, 3]" at `pos`, advancing it; false when the text is not such a list.
bool parse_list(std::string_view line, size_t& pos, std::vector<int64_t>& out) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  if (pos >= line.size() || line[pos] != '[') return false;
  ++pos;
  out.clear();
  for (;;) {
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos < line.size() && line[pos] == ']') return ++pos, true;
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(std::string(line.substr(pos, 24)), &used);
    } catch (const std::exception&) {
      return false;
    }
    out.push_back(v);
    pos += used;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos < line.size() && line[pos] == ',') ++pos;
    else if (pos < line.size() && line[pos] == ']') return ++pos, true;
    else return false;
  }
}

bool expect_word(std::string_view line, size_t& pos, std::string_view word) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  if (line.substr(pos, word.size()) != word) return false;
  pos += word.size();
  return true;
}

}  // namespace

std::string format_repro(const Fusion& fusion, const std::vector<Layout>& input_layouts, std::string_view note,
                         uint64_t value_seed) {
  std::ostringstream out;
  out << "# viewfuse repro\n";
  std::istringstream lines{std::string(note)};
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  const auto& inputs = fusion.inputs();
  for (size_t i = 0; i < inputs.size() && i < input_layouts.size(); ++i)
    if (inputs[i]->is_tensor) out << kLayoutPrefix << inputs[i]->name << ": " << input_layouts[i].to_string() << "\n";
  out << kSeedPrefix << value_seed << "\n";
  out << print_trace(fusion);
  return out.str();
}

std::vector<Layout> read_repro_layouts(std::string_view text, const Fusion& fusion) {
  std::vector<Layout> layouts;
  for (const Value* in : fusion.inputs()) layouts.push_back(in->is_tensor ? Layout::contiguous(in->shape) : Layout{});
  size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.substr(0, kLayoutPrefix.size()) != kLayoutPrefix) continue;
    const size_t colon = line.find(':');
    VF_USER_CHECK(colon != std::string_view::npos, "repro line ", line_no, ": expected '# layout NAME: sizes [...] ",
                  "strides [...] offset N', got '", line, "'");
    const std::string name(line.substr(kLayoutPrefix.size(), colon - kLayoutPrefix.size()));
    Layout l;
    size_t pos = colon + 1;
    bool ok = expect_word(line, pos, "sizes") && parse_list(line, pos, l.sizes) && expect_word(line, pos, "strides") &&
              parse_list(line, pos, l.strides) && expect_word(line, pos, "offset");
    if (ok) {
      try {
        l.offset = std::stoll(std::string(line.substr(pos)));
      } catch (const std::exception&) {
        ok = false;
      }
    }
    VF_USER_CHECK(ok, "repro line ", line_no, ": expected '# layout NAME: sizes [...] strides [...] offset N', got '",
                  line, "'");
    size_t index = 0;
    while (index < fusion.inputs().size() && fusion.inputs()[index]->name != name) ++index;
    VF_USER_CHECK(index < fusion.inputs().size(), "repro line ", line_no, ": layout of '", name,
                  "', which is not an input of the trace");
    const Value* in = fusion.inputs()[index];
    VF_USER_CHECK(in->is_tensor && l.sizes == in->shape && l.strides.size() == l.sizes.size() && l.offset >= 0,
                  "repro line ", line_no, ": layout ", l.to_string(), " does not fit input '", name, "' of type ",
                  in->type_string());
    layouts[index] = l;
  }
  return layouts;
}

uint64_t read_repro_seed(std::string_view text) {
  const size_t at = text.find(kSeedPrefix);
  if (at == std::string_view::npos) return 0;
  return std::strtoull(std::string(text.substr(at + kSeedPrefix.size(), 24)).c_str(), nullptr, 10);
}

fs::path repro_dir() {
  if (const char* dir = std::getenv("VF_REPRO_DIR"); dir && *dir) return dir;
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  return (ec ? fs::path("/tmp") : tmp) / "viewfuse-repro";
}

fs::path write_repro(const Fusion& fusion, const std::vector<Layout>& input_layouts, std::string_view note) {
  try {
    const std::string text = format_repro(fusion, input_layouts, note);
    const fs::path dir = repro_dir();
    std::error_code ec;
    fs::create_directories(dir, ec);
    char name[40];
    std::snprintf(name, sizeof name, "repro-%016llx.py",
                  static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
    const fs::path path = dir / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return {};
    return path;
  } catch (const std::exception&) {
    return {};
  }
}

void rethrow_with_repro(const InternalError& error, const Fusion& fusion, const std::vector<Arg>& args) {
  std::vector<Layout> layouts;
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const Tensor* t = i < args.size() ? std::get_if<Tensor>(&args[i]) : nullptr;
    layouts.push_back(t ? t->layout : Layout{});
  }
  rethrow_with_repro(error, fusion, layouts);
}

void rethrow_with_repro(const InternalError& error, const Fusion& fusion, const std::vector<Layout>& layouts) {
  std::string message = error.what();
  // An error that already carries a repro (rethrown through a nested run) keeps the first one.
  if (message.find("\nrepro: ") != std::string::npos) throw error;
  const fs::path path = write_repro(fusion, layouts, "error: " + message);
  throw InternalError(message + "\nrepro: " +
                      (path.empty() ? "(could not be written under " + repro_dir().string() + ")" : path.string()));
}

}  // namespace vf
