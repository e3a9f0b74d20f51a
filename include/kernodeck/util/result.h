// Result<T>: a value or an Error, returned across module boundaries.
//
// Errors are values: a module returns Result<T> and the caller decides. Only
// `main` turns an Error into an exit code and one line on stderr.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kernodeck {

// What went wrong, as a kind the caller can branch on (Error::is) and an exit code can be
// derived from (report::exitCodeOf). The kinds are the only vocabulary: code never invents a
// string code, nor compares one (tests/structure/error_kinds.py).
enum class ErrorKind {
  NotFound,     // the thing asked for does not exist (a file, a blob, a tag, a key)
  Invalid,      // it was read but is not what was asked for (garbage JSON, a bad field or flag)
  Io,           // it could not be read or written (a system call, a transfer cut short)
  Unsupported,  // a real case Kernodeck does not handle (an algorithm, a media type, a build)
  Corrupt,      // it contradicts itself or its digest (a blob that does not hash as named)
  Unsafe,       // it would escape or harm (a path out of the root, a link, a hostile entry)
  Auth,         // a registry refused, or its authentication could not be completed
  Unreachable,  // a service or device that should answer does not
  Timeout,      // it did not finish in the time allowed
  Signature,    // a signature is missing or does not verify
  Failed,       // a computation or a child process ran and failed
};

// The stable lower-case name of a kind ("not_found", "invalid", ...), for logs and tests.
constexpr const char* errorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::NotFound: return "not_found";
    case ErrorKind::Invalid: return "invalid";
    case ErrorKind::Io: return "io";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Corrupt: return "corrupt";
    case ErrorKind::Unsafe: return "unsafe";
    case ErrorKind::Auth: return "auth";
    case ErrorKind::Unreachable: return "unreachable";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Signature: return "signature";
    case ErrorKind::Failed: return "failed";
  }
  return "?";
}

// An error: its kind and one line that names the thing that failed (a file, a blob, a
// registry). Made with a factory (Error::NotFound(...)) or Error(kind, message).
struct Error {
  ErrorKind kind;
  std::string message;

  Error(ErrorKind k, std::string m) : kind(k), message(std::move(m)) {}

  bool is(ErrorKind k) const { return kind == k; }
  const char* kindName() const { return errorKindName(kind); }

  // The same error with `what` in front: "WHAT: MESSAGE" (the kind is kept), for a caller that
  // adds which file, layer or index the failure was met in.
  Error context(const std::string& what) const& { return {kind, what + ": " + message}; }
  Error context(const std::string& what) && { return {kind, what + ": " + std::move(message)}; }

  static Error NotFound(std::string m) { return {ErrorKind::NotFound, std::move(m)}; }
  static Error Invalid(std::string m) { return {ErrorKind::Invalid, std::move(m)}; }
  static Error Io(std::string m) { return {ErrorKind::Io, std::move(m)}; }
  static Error Unsupported(std::string m) { return {ErrorKind::Unsupported, std::move(m)}; }
  static Error Corrupt(std::string m) { return {ErrorKind::Corrupt, std::move(m)}; }
  static Error Unsafe(std::string m) { return {ErrorKind::Unsafe, std::move(m)}; }
  static Error Auth(std::string m) { return {ErrorKind::Auth, std::move(m)}; }
  static Error Unreachable(std::string m) { return {ErrorKind::Unreachable, std::move(m)}; }
  static Error Timeout(std::string m) { return {ErrorKind::Timeout, std::move(m)}; }
  static Error Signature(std::string m) { return {ErrorKind::Signature, std::move(m)}; }
  static Error Failed(std::string m) { return {ErrorKind::Failed, std::move(m)}; }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)) {}  // NOLINT
  bool ok() const { return !err_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(!ok());
    return *err_;
  }

 private:
  std::optional<Error> err_;
};

using Status = Result<void>;

}  // namespace kernodeck

// TRY(x): evaluate a Result; on error, return the error from the caller.
#define KDK_CONCAT_(a, b) a##b
#define KDK_CONCAT(a, b) KDK_CONCAT_(a, b)
#define KDK_TRY_STATUS(expr)                 \
  do {                                       \
    auto _kdk_r = (expr);                    \
    if (!_kdk_r.ok()) return _kdk_r.error(); \
  } while (0)
#define KDK_TRY_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                        \
  if (!tmp.ok()) return tmp.error();        \
  lhs = std::move(tmp).value()
#define KDK_TRY_ASSIGN(lhs, expr) KDK_TRY_ASSIGN_IMPL(KDK_CONCAT(_kdk_t, __LINE__), lhs, expr)
