// The trace lexer: Python-subset source text to tokens, with line and column of each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vf {

enum class TokenKind : uint8_t {
  Name,     // identifiers and keywords (def, del, return, True, ...)
  Int,      // decimal integer literal; value in int_value (magnitude, at most 2^63)
  Float,    // float literal; value in float_value (finite)
  String,   // quoted string; text holds the decoded contents
  Op,       // punctuation: ( ) [ ] { } , : . = - + @ * -> ;
  Comment,  // '#' to end of line; text holds what follows '#'
  Newline,  // end of a logical line (never inside brackets)
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // the name, the operator, the string contents or the comment body
  uint64_t int_value = 0;
  double float_value = 0;
  int line = 1;
  int column = 1;  // 1-based, in bytes

  bool is_op(std::string_view op) const { return kind == TokenKind::Op && text == op; }
  bool is_name(std::string_view name) const { return kind == TokenKind::Name && text == name; }
};

// A readable description of a token for error messages: "name 'foo'", "'('", "end of line".
std::string describe_token(const Token& token);

// Splits text into tokens. Comments inside brackets are dropped; a Newline ends each non-empty
// logical line; the list ends with End. Throws TraceError for unterminated strings and brackets,
// mismatched brackets, characters outside the subset and numbers that overflow.
std::vector<Token> lex_trace(std::string_view text, std::string_view filename);

}  // namespace vf
