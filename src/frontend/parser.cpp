// The trace parser: recursive descent over the tokens of one logical line at a time.
#include "frontend/parser.h"

#include "base/error.h"

namespace vf {

std::string Expr::dotted_name() const {
  if (kind == Kind::Name) return text;
  if (kind == Kind::Attribute && base) {
    std::string prefix = base->dotted_name();
    return prefix.empty() ? "" : prefix + "." + text;
  }
  return "";
}

namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::string_view filename) : tokens_(tokens), file_(filename) {}

  std::vector<Stmt> run() {
    std::vector<Stmt> stmts;
    while (peek().kind != TokenKind::End) {
      if (peek().kind == TokenKind::Newline) {
        ++pos_;
        continue;
      }
      stmts.push_back(statement());
    }
    return stmts;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }

  template <typename... Args>
  [[noreturn]] void fail(const Token& at, Args&&... args) const {
    throw TraceError(std::string(file_), at.line, at.column, detail::concat(std::forward<Args>(args)...));
  }
  [[noreturn]] void expected(std::string_view what) const {
    fail(peek(), "expected ", what, ", found ", describe_token(peek()));
  }
  bool accept_op(std::string_view op) {
    if (!peek().is_op(op)) return false;
    ++pos_;
    return true;
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) expected("'" + std::string(op) + "'");
  }
  NameRef expect_name(std::string_view what) {
    if (peek().kind != TokenKind::Name) expected(what);
    const Token& t = next();
    return NameRef{t.text, t.line, t.column};
  }
  void skip_to_end_of_line() {
    while (peek().kind != TokenKind::Newline && peek().kind != TokenKind::End) ++pos_;
  }
  bool at_line_end() const {
    return peek().kind == TokenKind::Comment || peek().kind == TokenKind::Newline || peek().kind == TokenKind::End;
  }
  void finish_line(Stmt& stmt) {
    if (peek().kind == TokenKind::Comment) stmt.comment = next();
    if (peek().kind != TokenKind::Newline && peek().kind != TokenKind::End) expected("end of line");
  }

  Stmt statement() {
    const Token& first = peek();
    Stmt stmt;
    stmt.line = first.line;
    stmt.column = first.column;
    if (first.kind == TokenKind::Comment) {
      stmt.kind = Stmt::Kind::Comment;
      stmt.comment = next();
      return stmt;
    }
    if (first.is_name("import") || first.is_name("from") || first.is_op("@") || first.is_name("pass")) {
      skip_to_end_of_line();
      return stmt;
    }
    if (first.is_name("def")) {
      next();
      def(stmt);
    } else if (first.is_name("del")) {
      next();
      stmt.kind = Stmt::Kind::Del;
      bool bracketed = accept_op("(") || accept_op("[");
      do {
        if (bracketed && (peek().is_op(")") || peek().is_op("]"))) break;
        stmt.names.push_back(expect_name("a name to delete"));
      } while (accept_op(","));
      if (bracketed && !accept_op(")")) expect_op("]");
    } else if (first.is_name("return")) {
      next();
      stmt.kind = Stmt::Kind::Return;
      if (!at_line_end()) stmt.value = expr_list();
    } else {
      assignment(stmt);
    }
    finish_line(stmt);
    return stmt;
  }

  void def(Stmt& stmt) {
    stmt.kind = Stmt::Kind::Def;
    stmt.def_name = expect_name("the function name after 'def'").name;
    expect_op("(");
    while (!peek().is_op(")")) {
      if (peek().is_op("*")) fail(peek(), "expected a parameter name, found '*' (variadic parameters are not supported)");
      stmt.names.push_back(expect_name("a parameter name"));
      if (accept_op(":")) expr(0);  // a Python type annotation; the comment annotation is what counts
      if (accept_op("=")) expr(0);
      if (!accept_op(",")) break;
    }
    expect_op(")");
    if (accept_op("->")) expr(0);
    expect_op(":");
  }

  static bool to_targets(const Expr& e, std::vector<NameRef>& out) {
    if (e.kind == Expr::Kind::Name) {
      out.push_back(NameRef{e.text, e.line, e.column});
      return true;
    }
    if (e.kind != Expr::Kind::Tuple && e.kind != Expr::Kind::List) return false;
    for (const auto& item : e.items)
      if (item->kind != Expr::Kind::Name || !to_targets(*item, out)) return false;
    return true;
  }

  void assignment(Stmt& stmt) {
    stmt.kind = Stmt::Kind::Assign;
    const Token& start = peek();
    if (start.kind != TokenKind::Name && !start.is_op("(") && !start.is_op("["))
      expected("a statement (an assignment, 'del' or 'return')");
    std::unique_ptr<Expr> target = expr_list();
    if (!peek().is_op("=")) {
      fail(peek(), "expected '=' after the assignment target (a statement is an assignment, 'del' or "
           "'return'), found ", describe_token(peek()));
    }
    if (!to_targets(*target, stmt.names) || stmt.names.empty())
      fail(start, "expected a name or a tuple of names to assign to");
    stmt.tuple_target = target->kind != Expr::Kind::Name;
    next();
    stmt.value = expr_list();
  }

  // expr {',' expr} [','] -> a single expr or a Tuple.
  std::unique_ptr<Expr> expr_list() {
    const Token& start = peek();
    std::unique_ptr<Expr> first = expr(0);
    if (!peek().is_op(",")) return first;
    auto tuple = make(Expr::Kind::Tuple, start);
    tuple->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_line_end() || peek().is_op("=")) break;
      tuple->items.push_back(expr(0));
    }
    return tuple;
  }

  static std::unique_ptr<Expr> make(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }

  std::unique_ptr<Expr> expr(int depth) {
    if (depth > kMaxExprDepth) fail(peek(), "expression nested too deeply (more than ", kMaxExprDepth, " levels)");
    const Token& t = peek();
    if (t.is_op("-") || t.is_op("+")) {
      next();
      std::unique_ptr<Expr> operand = expr(depth + 1);
      if (t.is_op("+")) return operand;
      auto neg = make(Expr::Kind::Neg, t);
      neg->base = std::move(operand);
      return neg;
    }
    std::unique_ptr<Expr> e = atom(depth);
    for (;;) {
      const Token& op = peek();
      if (op.is_op(".")) {
        next();
        NameRef attr = expect_name("an attribute name after '.'");
        auto a = make(Expr::Kind::Attribute, op);
        a->line = e->line;  // a dotted name is located at its start
        a->column = e->column;
        a->text = attr.name;
        a->base = std::move(e);
        e = std::move(a);
      } else if (op.is_op("(")) {
        next();
        auto call = make(Expr::Kind::Call, op);
        call->line = e->line;
        call->column = e->column;
        call->base = std::move(e);
        call_args(*call, depth + 1);
        e = std::move(call);
      } else {
        return e;
      }
    }
  }

  void call_args(Expr& call, int depth) {
    while (!peek().is_op(")")) {
      if (peek().kind == TokenKind::Name && peek(1).is_op("=")) {
        std::string key = next().text;
        next();
        for (const auto& kw : call.keywords)
          if (kw.first == key) fail(peek(), "keyword argument '", key, "' is given twice");
        call.keywords.emplace_back(key, expr(depth));
      } else {
        if (!call.keywords.empty()) fail(peek(), "expected a keyword argument (positional arguments cannot follow keyword arguments), found ", describe_token(peek()));
        call.items.push_back(expr(depth));
      }
      if (!accept_op(",")) break;
    }
    expect_op(")");
  }

  // Elements up to the closing bracket; returns whether a comma was seen.
  bool sequence(Expr& e, std::string_view close, int depth) {
    bool comma = false;
    while (!peek().is_op(close)) {
      e.items.push_back(expr(depth));
      if (!accept_op(",")) break;
      comma = true;
    }
    expect_op(close);
    return comma;
  }

  std::unique_ptr<Expr> atom(int depth) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Name: {
        next();
        if (t.text == "True" || t.text == "False") {
          auto b = make(Expr::Kind::Bool, t);
          b->bool_value = t.text == "True";
          return b;
        }
        if (t.text == "None") return make(Expr::Kind::None, t);
        auto n = make(Expr::Kind::Name, t);
        n->text = t.text;
        return n;
      }
      case TokenKind::Int: {
        next();
        auto n = make(Expr::Kind::Int, t);
        n->int_value = t.int_value;
        n->text = t.text;
        return n;
      }
      case TokenKind::Float: {
        next();
        auto n = make(Expr::Kind::Float, t);
        n->float_value = t.float_value;
        n->text = t.text;
        return n;
      }
      case TokenKind::String: {
        next();
        auto s = make(Expr::Kind::String, t);
        s->text = t.text;
        return s;
      }
      case TokenKind::Op: {
        if (t.is_op("(")) {
          next();
          auto tuple = make(Expr::Kind::Tuple, t);
          bool comma = sequence(*tuple, ")", depth + 1);
          if (tuple->items.size() == 1 && !comma) return std::move(tuple->items[0]);
          return tuple;
        }
        if (t.is_op("[")) {
          next();
          auto list = make(Expr::Kind::List, t);
          sequence(*list, "]", depth + 1);
          return list;
        }
        if (t.is_op("{")) {
          next();
          auto dict = make(Expr::Kind::Dict, t);
          while (!peek().is_op("}")) {
            dict->keys.push_back(expr(depth + 1));
            expect_op(":");
            dict->items.push_back(expr(depth + 1));
            if (!accept_op(",")) break;
          }
          expect_op("}");
          return dict;
        }
        break;
      }
      case TokenKind::Comment: case TokenKind::Newline: case TokenKind::End:
        break;
    }
    expected("an expression");
  }

  const std::vector<Token>& tokens_;
  std::string_view file_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<Stmt> parse_trace(const std::vector<Token>& tokens, std::string_view filename) {
  if (tokens.empty()) return {};
  return Parser(tokens, filename).run();
}

}  // namespace vf
