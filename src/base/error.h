// Error types and checking macros: user mistakes and internal invariants are separate kinds.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace vf {

enum class ErrorKind {
  User,      // the program or its inputs are wrong (bad shapes, unknown op, bad arguments)
  Trace,     // a trace text is malformed; carries file, line and column
  Device,    // the device or its libraries cannot do what was asked (no driver, out of memory)
  Internal,  // a viewfuse invariant broke: a bug in viewfuse
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

class UserError : public Error {
 public:
  explicit UserError(std::string message) : Error(ErrorKind::User, std::move(message)) {}

 protected:
  UserError(ErrorKind kind, std::string message) : Error(kind, std::move(message)) {}
};

// A malformed trace. what() reads "FILE:LINE:COL: error: MESSAGE"; message() is MESSAGE alone.
class TraceError : public UserError {
 public:
  TraceError(std::string file, int line, int column, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

class DeviceError : public Error {
 public:
  explicit DeviceError(std::string message) : Error(ErrorKind::Device, std::move(message)) {}
};

class InternalError : public Error {
 public:
  explicit InternalError(std::string message) : Error(ErrorKind::Internal, std::move(message)) {}
};

namespace detail {
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}
[[noreturn]] void throw_internal(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace detail

}  // namespace vf

// User mistakes: the message names the op, its arguments, what was expected and what was given.
// The arguments are streamed into the message only when the check fails.
#define VF_USER_CHECK(cond, ...)                                   \
  do {                                                             \
    if (!(cond)) throw ::vf::UserError(::vf::detail::concat(__VA_ARGS__)); \
  } while (0)
#define VF_USER_ERROR(...) throw ::vf::UserError(::vf::detail::concat(__VA_ARGS__))

// Internal invariants: a failure is a viewfuse bug, reported with file, line and the condition.
#define VF_INTERNAL_CHECK(cond, ...)                                                           \
  do {                                                                                         \
    if (!(cond))                                                                               \
      ::vf::detail::throw_internal(__FILE__, __LINE__, #cond, ::vf::detail::concat(__VA_ARGS__)); \
  } while (0)
#define VF_INTERNAL_ERROR(...) \
  ::vf::detail::throw_internal(__FILE__, __LINE__, "unreachable", ::vf::detail::concat(__VA_ARGS__))
