// The trace parser: tokens to a small Python-subset AST (one statement per logical line).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/lexer.h"

namespace vf {

struct Expr {
  enum class Kind : uint8_t { Name, Attribute, Call, Tuple, List, Dict, Int, Float, String, Bool, None, Neg };
  Kind kind = Kind::None;
  int line = 0, column = 0;
  std::string text;          // Name: the identifier; Attribute: the attribute; String: the contents
  uint64_t int_value = 0;    // Int: the magnitude (at most 2^63, negated by an enclosing Neg)
  double float_value = 0;    // Float
  bool bool_value = false;   // Bool
  std::unique_ptr<Expr> base;                // Attribute: the object; Call: the callee; Neg: the operand
  std::vector<std::unique_ptr<Expr>> items;  // Tuple/List elements, Call positional args, Dict values
  std::vector<std::unique_ptr<Expr>> keys;   // Dict keys
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> keywords;  // Call keyword args

  // "prims.add" for a dotted name, "" when the expression is not one.
  std::string dotted_name() const;
};

struct NameRef {
  std::string name;
  int line = 0, column = 0;
};

struct Stmt {
  enum class Kind : uint8_t {
    Skip,     // import, from, decorator and pass lines
    Comment,  // a line holding only a comment; comment_text is its body
    Def,      // def NAME(params):
    Assign,   // targets = value
    Del,      // del names
    Return,   // return [value]
  };
  Kind kind = Kind::Skip;
  int line = 0, column = 0;
  std::string def_name;
  std::vector<NameRef> names;  // Def parameters, Assign targets, Del names
  bool tuple_target = false;   // Assign: the targets were written as a tuple or list
  std::unique_ptr<Expr> value; // Assign right-hand side, Return value (null for a bare return)
  // The comment after the statement (or the whole line for Comment), with the column of its '#'.
  std::optional<Token> comment;
};

// Parses every logical line. Throws TraceError (file, line, column) with what was expected and what
// was found. Expressions nest at most kMaxExprDepth deep.
inline constexpr int kMaxExprDepth = 64;
std::vector<Stmt> parse_trace(const std::vector<Token>& tokens, std::string_view filename);

}  // namespace vf
