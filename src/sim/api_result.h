// ApiResult<T> and ApiStatus: how the simulator's request pipeline reports an HTTP error
// (status, optional Oxide error_code, message, headers) without throwing. The StatusOr of
// the plugin (util/status.h) carries only a gRPC-style code, so the HTTP-level errors need
// their own value type; detail-level parse errors (JSON reader, names) use oxide::Status and
// are wrapped into an ApiError by the extractor that knows which 400 to give.
// Plain value types: any thread. See docs/sim-dialect.md.
#pragma once

#include <optional>
#include <utility>
#include <variant>

#include "api_error.h"
#include "util/status.h"

namespace oxide_sim {

// Success, or the ApiError to answer with.
class [[nodiscard]] ApiStatus {
 public:
  ApiStatus() = default;
  ApiStatus(ApiError error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  static ApiStatus Ok() { return ApiStatus(); }
  bool ok() const { return !error_.has_value(); }
  // Only when !ok().
  const ApiError& error() const& { return *error_; }
  ApiError&& error() && { return std::move(*error_); }

 private:
  std::optional<ApiError> error_;
};

// A value, or the ApiError explaining why there is none.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : state_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  ApiResult(ApiError error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  // Only when !ok().
  const ApiError& error() const& { return std::get<ApiError>(state_); }
  ApiError&& error() && { return std::get<ApiError>(std::move(state_)); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, ApiError> state_;
};

// The error half of each result type, for the macros below.
inline ApiError ErrorOf(ApiStatus&& status) {
  return std::move(status).error();
}
template <typename T>
ApiError ErrorOf(ApiResult<T>&& result) {
  return std::move(result).error();
}
inline oxide::Status ErrorOf(oxide::Status&& status) {
  return std::move(status);
}
template <typename T>
oxide::Status ErrorOf(oxide::StatusOr<T>&& result) {
  return result.status();
}

}  // namespace oxide_sim

#define OXIDE_SIM_CONCAT_INNER(a, b) a##b
#define OXIDE_SIM_CONCAT(a, b) OXIDE_SIM_CONCAT_INNER(a, b)

// Returns the error of `expr` (an ApiStatus/ApiResult or Status/StatusOr) from the enclosing
// function if there is one.
#define SIM_RETURN_IF_ERROR(expr)                                               \
  do {                                                                          \
    auto sim_status_ = (expr);                                                  \
    if (!sim_status_.ok()) return ::oxide_sim::ErrorOf(std::move(sim_status_)); \
  } while (false)

// `lhs = value of expr`, or returns its error from the enclosing function.
#define SIM_ASSIGN_OR_RETURN(lhs, expr) \
  SIM_ASSIGN_OR_RETURN_IMPL(OXIDE_SIM_CONCAT(sim_result_, __LINE__), lhs, expr)
#define SIM_ASSIGN_OR_RETURN_IMPL(result, lhs, expr)                \
  auto result = (expr);                                             \
  if (!result.ok()) return ::oxide_sim::ErrorOf(std::move(result)); \
  lhs = std::move(result).value()
