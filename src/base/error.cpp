#include "base/error.h"

namespace vf {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::User: return "user error";
    case ErrorKind::Trace: return "trace error";
    case ErrorKind::Device: return "device error";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

TraceError::TraceError(std::string file, int line, int column, std::string message)
    : UserError(ErrorKind::Trace,
                detail::concat(file, ":", line, ":", column, ": error: ", message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      message_(std::move(message)) {}

namespace detail {
void throw_internal(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(concat("internal error at ", file, ":", line, ": check '", cond,
                             "' failed", msg.empty() ? "" : ": ", msg,
                             " (this is a viewfuse bug; please report it)"));
}
}  // namespace detail

}  // namespace vf
