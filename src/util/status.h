// Status and StatusOr: how fallible calls report errors inside the plugin. The codes mirror gRPC's
// so the RPC boundary converts them one to one. Plain value types: any thread.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace oxide {

enum class StatusCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
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
  std::string ToString() const;

  // Where the failure came from, for the call's log record (docs/logging.md); never sent to the
  // caller. Set where the error is made (backend/error_mapping.cc, the Oxide client).
  //
  // An operator must fix the cause (a token Oxide rejects, a missing project, quota): the call is
  // logged at error level whatever its code.
  bool operator_must_fix() const { return operator_must_fix_; }
  Status& MarkOperatorMustFix() {
    operator_must_fix_ = true;
    return *this;
  }
  // The Oxide answer that caused it: its request id (x-request-id) and the API operationId.
  const std::string& oxide_request_id() const { return oxide_request_id_; }
  const std::string& oxide_operation() const { return oxide_operation_; }
  Status& SetOxideRequest(std::string request_id, std::string operation) {
    oxide_request_id_ = std::move(request_id);
    oxide_operation_ = std::move(operation);
    return *this;
  }
  // The same failure (code and origin) with another message.
  Status WithMessage(std::string message) const {
    Status copy = *this;
    copy.message_ = std::move(message);
    return copy;
  }

  // What the caller sees: the code and the message (not the origin).
  bool operator==(const Status& other) const {
    return code_ == other.code_ && message_ == other.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  bool operator_must_fix_ = false;
  std::string oxide_request_id_;
  std::string oxide_operation_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status AlreadyExists(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status Unimplemented(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}
inline Status Aborted(std::string m) {
  return {StatusCode::kAborted, std::move(m)};
}
inline Status OutOfRange(std::string m) {
  return {StatusCode::kOutOfRange, std::move(m)};
}

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : state_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace oxide
