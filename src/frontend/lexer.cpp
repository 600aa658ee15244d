// The trace lexer: one pass over the text, tracking brackets so newlines inside them are ignored.
#include "frontend/lexer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.h"

namespace vf {
namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

constexpr uint64_t kMaxIntMagnitude = uint64_t{1} << 63;  // allows -9223372036854775808

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view filename) : text_(text), file_(filename) {}

  std::vector<Token> run() {
    while (pos_ < text_.size()) step();
    if (!brackets_.empty()) {
      const Token& open = brackets_.back();
      fail(open.line, open.column, "unterminated '", open.text, "': no matching closing bracket before the end of the text");
    }
    end_line();
    Token end;
    end.kind = TokenKind::End;
    end.line = line_;
    end.column = column();
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(int line, int column, Args&&... args) const {
    throw TraceError(std::string(file_), line, column, detail::concat(std::forward<Args>(args)...));
  }

  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  Token make(TokenKind kind, std::string text, int col) const {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.line = line_;
    t.column = col;
    return t;
  }

  // Emits a Newline if the current logical line has tokens other than its trailing comment.
  void end_line() {
    if (!tokens_.empty() && tokens_.back().kind != TokenKind::Newline)
      tokens_.push_back(make(TokenKind::Newline, "", column()));
  }

  void new_physical_line() {
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }

  void step() {
    char c = text_[pos_];
    if (c == '\n') {
      if (brackets_.empty()) end_line();
      new_physical_line();
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++pos_;
      return;
    }
    if (c == '\\') {  // line continuation
      size_t next = pos_ + 1;
      if (next < text_.size() && text_[next] == '\r') ++next;
      if (next < text_.size() && text_[next] == '\n') {
        pos_ = next;
        new_physical_line();
        return;
      }
      fail(line_, column(), "unexpected '\\' (only a line continuation at the end of a line is allowed)");
    }
    if (c == '#') return comment();
    if (is_name_start(c)) return name();
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) return number();
    if (c == '\'' || c == '"') return string();
    punctuation();
  }

  void comment() {
    int col = column();
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string body(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end;
    if (brackets_.empty()) tokens_.push_back(make(TokenKind::Comment, std::move(body), col));
  }

  void name() {
    int col = column();
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    tokens_.push_back(make(TokenKind::Name, std::string(text_.substr(start, pos_ - start)), col));
  }

  void number() {
    int col = column();
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t exp = pos_ + 1;
      if (exp < text_.size() && (text_[exp] == '+' || text_[exp] == '-')) ++exp;
      if (exp < text_.size() && is_digit(text_[exp])) {
        is_float = true;
        pos_ = exp;
        while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
      }
    }
    std::string spelling(text_.substr(start, pos_ - start));
    if (pos_ < text_.size() && (is_name_char(text_[pos_]) || text_[pos_] == '.'))
      fail(line_, col, "invalid number literal starting with '", spelling, "' (expected a decimal int or float)");
    Token t = make(is_float ? TokenKind::Float : TokenKind::Int, spelling, col);
    if (is_float) {
      errno = 0;
      double v = std::strtod(spelling.c_str(), nullptr);
      if (std::isinf(v)) fail(line_, col, "float literal ", spelling, " overflows a double");
      t.float_value = v;
    } else {
      uint64_t v = 0;
      for (char d : spelling) {
        uint64_t digit = static_cast<uint64_t>(d - '0');
        if (v > (kMaxIntMagnitude - digit) / 10)
          fail(line_, col, "integer literal ", spelling, " does not fit in 64 bits (expected at most 9223372036854775807)");
        v = v * 10 + digit;
      }
      t.int_value = v;
    }
    tokens_.push_back(std::move(t));
  }

  void string() {
    int col = column();
    int line = line_;
    char quote = text_[pos_++];
    std::string value;
    for (;;) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        fail(line, col, "unterminated string: no closing ", quote, " on this line");
      char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= text_.size() || text_[pos_] == '\n') fail(line, col, "unterminated string: no closing ", quote, " on this line");
        char e = text_[pos_++];
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case '\\': case '\'': case '"': value += e; break;
          default: value += '\\'; value += e; break;
        }
        continue;
      }
      value += c;
    }
    tokens_.push_back(make(TokenKind::String, std::move(value), col));
  }

  void punctuation() {
    int col = column();
    char c = text_[pos_];
    if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
      pos_ += 2;
      tokens_.push_back(make(TokenKind::Op, "->", col));
      return;
    }
    static constexpr std::string_view kSingle = "()[]{},:.=-+@*;";
    if (kSingle.find(c) == std::string_view::npos) {
      unsigned code = static_cast<unsigned char>(c);
      if (code < 32 || code > 126)
        fail(line_, col, "unexpected byte 0x", "0123456789abcdef"[code >> 4], "0123456789abcdef"[code & 15],
             " (traces are ASCII Python)");
      fail(line_, col, "unexpected character '", c, "'");
    }
    ++pos_;
    Token t = make(TokenKind::Op, std::string(1, c), col);
    if (c == '(' || c == '[' || c == '{') {
      brackets_.push_back(t);
    } else if (c == ')' || c == ']' || c == '}') {
      char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (brackets_.empty()) fail(line_, col, "unmatched '", c, "': no bracket is open");
      const Token& open = brackets_.back();
      if (open.text[0] != want)
        fail(line_, col, "'", c, "' does not match '", open.text, "' opened at line ", open.line, ", column ", open.column);
      brackets_.pop_back();
    }
    tokens_.push_back(std::move(t));
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
  std::vector<Token> brackets_;
  std::vector<Token> tokens_;
};

}  // namespace

std::string describe_token(const Token& token) {
  switch (token.kind) {
    case TokenKind::Name: return "name '" + token.text + "'";
    case TokenKind::Int: case TokenKind::Float: return "number " + token.text;
    case TokenKind::String: return "a string";
    case TokenKind::Op: return "'" + token.text + "'";
    case TokenKind::Comment: return "a comment";
    case TokenKind::Newline: return "end of line";
    case TokenKind::End: return "end of text";
  }
  return "?";
}

std::vector<Token> lex_trace(std::string_view text, std::string_view filename) {
  return Lexer(text, filename).run();
}

}  // namespace vf
