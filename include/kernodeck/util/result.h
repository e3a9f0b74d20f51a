// Result<T>: a value or an Error, returned across module boundaries.
//
// Errors are values: a module returns Result<T> and the caller decides. Only
// `main` turns an Error into an exit code and one line on stderr.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kernodeck {

// Error codes are stable, short, lower-case words; the message is one line
// that names the thing that failed (a file, a blob, a registry).
struct Error {
  std::string code;
  std::string message;

  static Error NotFound(std::string m) { return {"not_found", std::move(m)}; }
  static Error Invalid(std::string m) { return {"invalid", std::move(m)}; }
  static Error Io(std::string m) { return {"io", std::move(m)}; }
  static Error Unsupported(std::string m) { return {"unsupported", std::move(m)}; }
  static Error Corrupt(std::string m) { return {"corrupt", std::move(m)}; }
  static Error Unsafe(std::string m) { return {"unsafe", std::move(m)}; }
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
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return err_;
  }

 private:
  Error err_;
  bool ok_ = true;
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
