// Status and Result<T>: how errors cross module boundaries in Vigil.
//
// No exceptions cross a module boundary. A failing function returns a Status
// (or a Result<T> that holds either a T or a failed Status) whose message a
// user can act on: say what failed, on what, and what to do about it.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vigil {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input from a caller or a peer; retrying will not help
  kNotFound,
  kAlreadyExists,
  kUnavailable,        // a peer or resource is away for now; retrying may help
  kDeadlineExceeded,   // an operation ran past its time bound
  kCorruption,         // stored data failed a checksum or structural check
  kResourceExhausted,  // a bound (size, count, disk) was hit
  kFailedPrecondition,
  kIoError,
  kUnimplemented,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid argument: <message>" or "ok".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// IoError from errno with the operation and path in the message.
Status ErrnoStatus(std::string_view op, std::string_view path, int err);

// Holds either a value or a failed Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "a Result needs a value or a failed Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }

  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace vigil

// Early-return helpers. They keep call sites flat, which is the point.
#define VIGIL_CONCAT_INNER(a, b) a##b
#define VIGIL_CONCAT(a, b) VIGIL_CONCAT_INNER(a, b)

#define VIGIL_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::vigil::Status _vigil_st = (expr);    \
    if (!_vigil_st.ok()) return _vigil_st; \
  } while (0)

// `lhs` is a declaration (`auto x`) or a plain variable: a conditional such
// as `c ? a : b` would bind the assignment to `b` alone.
#define VIGIL_ASSIGN_OR_RETURN(lhs, expr) \
  VIGIL_ASSIGN_OR_RETURN_IMPL(VIGIL_CONCAT(_vigil_res_, __LINE__), lhs, expr)
#define VIGIL_ASSIGN_OR_RETURN_IMPL(res, lhs, expr) \
  auto res = (expr);                                \
  if (!res.ok()) return res.status();               \
  lhs = std::move(res).value()
