// The Thunder trace reader: walks the parsed statements, declares inputs from their annotation
// comments, lowers each call through lower_call and checks result annotations.
#include "frontend/trace_reader.h"

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/lexer.h"
#include "frontend/lower_call.h"
#include "frontend/parser.h"

namespace vf {
namespace {

constexpr int64_t kMaxAnnotatedNumel = int64_t{1} << 48;

// `# name: "type"` split into its parts, with the 1-based column of the type text.
struct Annotation {
  std::string name;
  std::string type;
  int line = 0;
  int column = 0;
};

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::optional<Annotation> split_annotation(const Token& comment) {
  const std::string& s = comment.text;
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t name_start = i;
  while (i < s.size() && is_ident_char(s[i])) ++i;
  // A name starts with a letter or '_' (so "# 0: ..." is a plain comment, not an input).
  if (i == name_start || (s[name_start] >= '0' && s[name_start] <= '9') || i >= s.size() || s[i] != ':')
    return std::nullopt;
  Annotation a;
  a.name = s.substr(name_start, i - name_start);
  ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || (s[i] != '"' && s[i] != '\'')) return std::nullopt;
  char quote = s[i++];
  size_t close = s.find(quote, i);
  if (close == std::string::npos) return std::nullopt;
  a.type = s.substr(i, close - i);
  a.line = comment.line;
  a.column = comment.column + 1 + static_cast<int>(i);
  return a;
}

// The type an annotation names: "cuda:0 f32[2, 3]", "cpu b8[]", "int 3", "float", "bool True".
ValueType parse_annotation_type(const TraceScope& scope, const Annotation& a) {
  // The shape may contain spaces ("f32[2, 3]"): split on the first space only after the device.
  std::string rest = a.type;
  size_t lead = rest.find_first_not_of(' ');
  rest = lead == std::string::npos ? "" : rest.substr(lead);
  int col = a.column + static_cast<int>(lead == std::string::npos ? 0 : lead);
  auto take_word = [&] {
    size_t sp = rest.find(' ');
    std::string w = rest.substr(0, sp);
    rest = sp == std::string::npos ? "" : rest.substr(sp + 1);
    return w;
  };
  std::string first = take_word();
  if (first == "cpu" || first == "meta" || first.rfind("cuda", 0) == 0) {
    col += static_cast<int>(first.size()) + 1;
    first = take_word();
  }
  ValueType t;
  if (first == "int" || first == "float" || first == "bool") {
    t.is_tensor = false;
    t.scalar_kind = first == "int" ? ScalarKind::Int : first == "float" ? ScalarKind::Float : ScalarKind::Bool;
    return t;
  }
  std::string full = first + (rest.empty() ? "" : " " + rest);
  size_t open = full.find('[');
  if (open == std::string::npos || full.back() != ']')
    scope.fail(a.line, col, "annotation of '", a.name, "': expected \"device dtype[shape]\" or \"int\"/\"float\"/\"bool\", found \"", a.type, "\"");
  std::string dtype_name = full.substr(0, open);
  std::optional<DType> dtype = dtype_from_short_name(dtype_name);
  if (!dtype)
    scope.fail(a.line, col, "annotation of '", a.name, "': unknown dtype '", dtype_name,
               "' (expected one of b8 ui8 i8 i16 i32 i64 bf16 f16 f32 f64)");
  t.dtype = *dtype;
  std::string dims = full.substr(open + 1, full.size() - open - 2);
  int64_t numel = 1;
  size_t pos = 0;
  while (pos < dims.size()) {
    while (pos < dims.size() && dims[pos] == ' ') ++pos;
    size_t start = pos;
    int64_t v = 0;
    while (pos < dims.size() && dims[pos] >= '0' && dims[pos] <= '9') {
      v = v * 10 + (dims[pos] - '0');
      if (v > kMaxAnnotatedNumel)
        scope.fail(a.line, col, "annotation of '", a.name, "': size in ", full, " is too large (more than 2^48)");
      ++pos;
    }
    if (pos == start) scope.fail(a.line, col, "annotation of '", a.name, "': expected a size in ", full);
    if (v > 0 && numel > kMaxAnnotatedNumel / v)
      scope.fail(a.line, col, "annotation of '", a.name, "': shape ", full, " has more than 2^48 elements");
    numel *= v;
    t.shape.push_back(v);
    while (pos < dims.size() && dims[pos] == ' ') ++pos;
    if (pos < dims.size() && dims[pos] != ',')
      scope.fail(a.line, col, "annotation of '", a.name, "': expected ',' or ']' in ", full);
    ++pos;
  }
  return t;
}

std::string type_text(const ValueType& t) {
  if (!t.is_tensor) return scalar_kind_name(t.scalar_kind);
  return std::string(dtype_short_name(t.dtype)) + shape_to_string(t.shape);
}

class Reader {
 public:
  Reader(Fusion& fusion, std::string file) : scope_{fusion, std::move(file), {}} {}

  void run(const std::vector<Stmt>& stmts) {
    size_t def_at = stmts.size();
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (stmts[i].kind != Stmt::Kind::Def) continue;
      if (def_at != stmts.size())
        scope_.fail(stmts[i].line, stmts[i].column, "expected one function, found a second 'def ", stmts[i].def_name, "'");
      def_at = i;
    }
    headless_ = def_at == stmts.size();
    if (headless_ && std::all_of(stmts.begin(), stmts.end(), [](const Stmt& s) {
          return s.kind == Stmt::Kind::Skip || s.kind == Stmt::Kind::Comment;
        }))
      scope_.fail(1, 1, "expected a function 'def NAME(ARGS):' (or a trace's statements), found ",
                  stmts.empty() ? "an empty trace" : "only comments");
    size_t body = 0;
    if (!headless_) {
      for (size_t i = 0; i < def_at; ++i)
        if (stmts[i].kind != Stmt::Kind::Skip && stmts[i].kind != Stmt::Kind::Comment)
          scope_.fail(stmts[i].line, stmts[i].column, "expected statements inside the function 'def ",
                      stmts[def_at].def_name, "', found one before it");
      declare_inputs(stmts, def_at);
      body = def_at + 1;
    }
    for (size_t i = body; i < stmts.size(); ++i) statement(stmts[i]);
    if (!returned_) {
      if (!headless_)
        scope_.fail(stmts.empty() ? 1 : stmts.back().line, 1, "expected a 'return' statement at the end of 'def ",
                    stmts[def_at].def_name, "'");
      for (const auto& node : scope_.fusion.nodes())
        for (Value* v : node->outputs)
          if (auto it = scope_.names.find(v->name); v->uses.empty() && it != scope_.names.end() && !it->second.deleted_line)
            scope_.fusion.add_output(v);
    }
  }

 private:
  void declare_inputs(const std::vector<Stmt>& stmts, size_t def_at) {
    const Stmt& def = stmts[def_at];
    std::unordered_map<std::string, Annotation> found;
    for (size_t i = def_at + 1; i < stmts.size(); ++i) {
      if (stmts[i].kind != Stmt::Kind::Comment) continue;
      std::optional<Annotation> a = split_annotation(*stmts[i].comment);
      if (a && !found.count(a->name)) found.emplace(a->name, *a);
    }
    for (const NameRef& param : def.names) {
      auto it = found.find(param.name);
      if (it == found.end())
        scope_.fail(param.line, param.column, "argument '", param.name, "' has no annotation (expected a comment line `# ",
                    param.name, ": \"cuda:0 f32[2, 3]\"` or `# ", param.name, ": \"int\"`)");
      declare_input(it->second);
    }
  }

  void declare_input(const Annotation& a) {
    if (scope_.names.count(a.name)) scope_.fail(a.line, a.column, "'", a.name, "' is declared twice");
    ValueType t = parse_annotation_type(scope_, a);
    Value* v = t.is_tensor ? scope_.fusion.add_tensor_input(a.name, t.dtype, t.shape)
                           : scope_.fusion.add_scalar_input(a.name, t.scalar_kind);
    scope_.names[a.name] = TraceScope::Binding{v, a.line, 0};
  }

  void statement(const Stmt& s) {
    if (s.kind == Stmt::Kind::Skip) return;
    if (s.kind == Stmt::Kind::Comment) {
      if (!headless_ || returned_) return;
      std::optional<Annotation> a = split_annotation(*s.comment);
      if (a && !scope_.names.count(a->name)) declare_input(*a);
      return;
    }
    if (returned_) scope_.fail(s.line, s.column, "expected nothing after 'return', found another statement");
    switch (s.kind) {
      case Stmt::Kind::Assign: return assign(s);
      case Stmt::Kind::Del:
        for (const NameRef& n : s.names) {
          scope_.lookup(n.name, n.line, n.column);
          scope_.names[n.name].deleted_line = s.line;
        }
        return;
      case Stmt::Kind::Return: return ret(s);
      case Stmt::Kind::Def: case Stmt::Kind::Skip: case Stmt::Kind::Comment: return;
    }
  }

  void assign(const Stmt& s) {
    std::vector<std::string> names;
    for (const NameRef& n : s.names) {
      auto it = scope_.names.find(n.name);
      if (it != scope_.names.end())
        scope_.fail(n.line, n.column, "'", n.name, "' is already defined at line ", it->second.defined_line,
                    " (each name is assigned once)");
      for (const std::string& earlier : names)
        if (earlier == n.name) scope_.fail(n.line, n.column, "'", n.name, "' appears twice on the left of '='");
      names.push_back(n.name);
    }
    const Expr& value = *s.value;
    std::vector<Value*> results;
    if (std::optional<Scalar> number = literal_number(scope_, value)) {
      results.push_back(scope_.fusion.add_constant(*number));
    } else if (value.kind == Expr::Kind::Name) {
      results.push_back(scope_.lookup(value.text, value.line, value.column));
    } else if (value.kind == Expr::Kind::Call) {
      results = lower_call(scope_, value, names);
    } else {
      scope_.fail(value, "expected a call, a name or a number on the right of '='");
    }
    if (results.size() != names.size() || (s.tuple_target && value.kind != Expr::Kind::Call))
      scope_.fail(s.line, s.column, "the right of '=' gives ", results.size(), " value(s) but ", names.size(),
                  " name(s) are assigned");
    for (size_t i = 0; i < names.size(); ++i) scope_.names[names[i]] = TraceScope::Binding{results[i], s.line, 0};
    if (s.comment) check_annotation(*s.comment, names, results);
  }

  void check_annotation(const Token& comment, const std::vector<std::string>& names, const std::vector<Value*>& results) {
    std::optional<Annotation> a = split_annotation(comment);
    if (!a) return;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != a->name) continue;
      ValueType want = parse_annotation_type(scope_, *a);
      const Value& v = *results[i];
      ValueType got{v.is_tensor, v.dtype, v.shape, v.scalar_kind};
      bool same = want.is_tensor == got.is_tensor &&
                  (want.is_tensor ? want.dtype == got.dtype && want.shape == got.shape
                                  : want.scalar_kind == got.scalar_kind);
      if (!same)
        scope_.fail(a->line, a->column, "annotation of '", a->name, "' expects ", type_text(want), " but ", type_text(got),
                    " was inferred");
    }
  }

  void collect_outputs(const Expr& e, bool top) {
    switch (e.kind) {
      case Expr::Kind::Name: {
        Value* v = scope_.lookup(e.text, e.line, e.column);
        if (!v->is_tensor) scope_.fail(e, "expected a tensor to return, '", e.text, "' is a ", v->type_string());
        scope_.fusion.add_output(v);
        return;
      }
      case Expr::Kind::Tuple: case Expr::Kind::List:
        for (const auto& item : e.items) collect_outputs(*item, false);
        return;
      case Expr::Kind::Dict:
        if (top) {
          for (size_t i = 0; i < e.keys.size(); ++i)
            if (e.keys[i]->kind == Expr::Kind::String && e.keys[i]->text == "output")
              return collect_outputs(*e.items[i], false);
          scope_.fail(e, "expected an 'output' entry in the returned dict");
        }
        break;
      case Expr::Kind::None:
        if (top) return;
        break;
      case Expr::Kind::Attribute: case Expr::Kind::Call: case Expr::Kind::Int: case Expr::Kind::Float:
      case Expr::Kind::String: case Expr::Kind::Bool: case Expr::Kind::Neg:
        break;
    }
    scope_.fail(e, "expected a name or a tuple of names to return");
  }

  void ret(const Stmt& s) {
    if (s.value) collect_outputs(*s.value, true);
    returned_ = true;
  }

  TraceScope scope_;
  bool headless_ = false;
  bool returned_ = false;
};

}  // namespace

Fusion read_trace(std::string_view text, std::string_view filename) {
  std::string file(filename);
  std::vector<Stmt> stmts = parse_trace(lex_trace(text, file), file);
  Fusion fusion;
  Reader reader(fusion, file);
  try {
    reader.run(stmts);
  } catch (const TraceError&) {
    throw;
  } catch (const UserError& e) {  // from Fusion calls outside a node (inputs, outputs)
    throw TraceError(file, 0, 0, e.what());
  }
  return fusion;
}

Fusion read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, 0, std::string("cannot open the trace file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return read_trace(text.str(), path);
}

}  // namespace vf
