// Oxide outcome → Status. Texts are from docs/oxide-api/README.md §2, §7-9. Clients should
// branch on status and error_code; where one HTTP 400 covers rules a caller must tell apart, the
// message decides (those texts are asserted in omicron's tests). First matching row wins:
//
// | Oxide outcome                                                    | code                |
// |------------------------------------------------------------------|---------------------|
// | 2xx                                                              | OK                  |
// | 400 error_code ObjectAlreadyExists ("already exists: disk …")    | ALREADY_EXISTS      |
// | 400 "cannot attach more than 12 disks to instance"               | RESOURCE_EXHAUSTED  |
// | 400 "… instance is not fully stopped" (attach/detach)             | FAILED_PRECONDITION |
// | 400 "… disk is attached to another instance"                      | FAILED_PRECONDITION |
// | 400 "… disk is currently being attached"                          | ABORTED (transient) |
// | 400 "cannot attach disk to instance in <s> state", "cannot detach |                     |
// |     disk from instance in <s> state", "… invalid state <s>"       | FAILED_PRECONDITION |
// | 400 "disk cannot be deleted in state …"                          | FAILED_PRECONDITION |
// | 400 "snapshot cannot be deleted in state …"                      | FAILED_PRECONDITION |
// | 400 "can't create a snapshot of a local storage disk"            | FAILED_PRECONDITION |
// | 400 "can't create a snapshot of a …" (read-only/other project)    | FAILED_PRECONDITION |
// | 400 "server does not support this API version"                   | FAILED_PRECONDITION |
// | 400 size limits: "total size must be at least 1 GiB", "… less     |                     |
// |     than 1023 GiB", "requested size over …", "too large to fit …", |                     |
// |     "… must be greater than or equal to snapshot size …"          | OUT_OF_RANGE        |
// | 400 any other (InvalidValue, InvalidRequest, framework 400s)      | INVALID_ARGUMENT    |
// | 401                                                              | UNAUTHENTICATED     |
// | 403                                                              | PERMISSION_DENIED   |
// | 404, 410                                                         | NOT_FOUND           |
// | 409 "boot disk cannot be detached"                               | FAILED_PRECONDITION |
// | 409 other (e.g. "volume repair lock"; retry after a delay)       | ABORTED             |
// | 429, 500, 502, 503, 504 (after retries when idempotent)          | UNAVAILABLE         |
// | 507 InsufficientCapacity (quota or physical)                     | RESOURCE_EXHAUSTED  |
// | other 4xx (405, 413, 415: a client bug)                          | INTERNAL            |
// | other status                                                     | UNKNOWN             |
// | per-request timeout (after retries when idempotent)              | DEADLINE_EXCEEDED   |
// | connection refused/reset/closed (after retries when idempotent)  | UNAVAILABLE         |
// | TLS handshake/verification failure (not retried)                 | UNAVAILABLE         |
// | other libcurl failure                                            | UNAVAILABLE         |
//
// A 500/503 or a lost connection on a non-idempotent POST leaves its outcome unknown; the caller
// looks the resource up. The token is never part of a request description or an Oxide message.
#include "backend/error_mapping.h"

#include <nlohmann/json.hpp>
#include <string>

namespace oxide::backend {
namespace {

struct OxideError {
  std::string error_code;
  std::string message;
  std::string request_id;
};

OxideError ParseErrorBody(const std::string& body) {
  OxideError error;
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return error;
  auto text = [&](const char* key) {
    auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  error.error_code = text("error_code");
  error.message = text("message");
  error.request_id = text("request_id");
  return error;
}

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

struct Row {
  StatusCode code;
  const char* rule;  // explains the Oxide rule to a person; nullptr = Oxide's message says it
  // The cause is the plugin's configuration or the silo (token, rights, quota, API version):
  // retrying does not help, an operator must act. Logged at error level (docs/logging.md).
  bool operator_must_fix = false;
};

Row Classify(int status, const OxideError& e) {
  const std::string& m = e.message;
  using C = StatusCode;
  switch (status) {
    case 400:
      if (e.error_code == "ObjectAlreadyExists") return {C::kAlreadyExists, nullptr};
      if (Has(m, "cannot attach more than 12 disks"))
        return {C::kResourceExhausted,
                "an Oxide instance takes at most 12 disks, boot disk included"};
      if (Has(m, "instance is not fully stopped"))
        return {C::kFailedPrecondition,
                "Oxide attaches and detaches disks only while the instance is stopped (no "
                "hot-plug)"};
      if (Has(m, "disk is attached to another instance"))
        return {C::kFailedPrecondition,
                "an Oxide disk is attached to at most one instance; detach it there first"};
      if (Has(m, "must be in the same project as the instance"))
        return {C::kFailedPrecondition,
                "Oxide attaches a disk only to an instance of the disk's project; this node's "
                "instance is in another project than the plugin's (--oxide-project)",
                true};
      if (Has(m, "disk is currently being attached"))
        return {C::kAborted, "the disk is being attached; try again shortly"};
      if (Has(m, "cannot attach disk to instance in") ||
          Has(m, "cannot detach disk from instance in"))
        return {C::kFailedPrecondition,
                "Oxide attaches and detaches disks only on instances that are stopped, "
                "being created or failed"};
      if ((Has(m, "cannot attach disk") || Has(m, "cannot detach disk")) && Has(m, "invalid state"))
        return {C::kFailedPrecondition,
                "Oxide attaches only disks that are detached or being created"};
      if (Has(m, "disk cannot be deleted in state"))
        return {C::kFailedPrecondition,
                "Oxide deletes a disk only when it is detached (or faulted); detach it first"};
      if (Has(m, "snapshot cannot be deleted in state"))
        return {C::kFailedPrecondition,
                "Oxide deletes a snapshot only when it is ready (or faulted)"};
      if (Has(m, "can't create a snapshot of a local storage disk"))
        return {C::kFailedPrecondition,
                "Oxide cannot snapshot a local (sled-local) disk, so a volume of a StorageClass "
                "with diskType local has no snapshots or clones"};
      if (Has(m, "can't create a snapshot of"))
        return {C::kFailedPrecondition,
                "Oxide snapshots only writable distributed disks of the same project"};
      if (Has(m, "server does not support this API version"))
        return {C::kFailedPrecondition,
                "the Oxide rack is older than the API version this plugin speaks", true};
      if (Has(m, "total size must be at least") || Has(m, "total size must be less than") ||
          Has(m, "requested size over") || Has(m, "too large to fit") ||
          Has(m, "must be greater than or equal to snapshot size"))
        return {C::kOutOfRange,
                "Oxide disks are whole GiB from 1 GiB to 1023 GiB (distributed), at least the "
                "size of their source snapshot"};
      return {C::kInvalidArgument, nullptr};
    case 401:
      return {C::kUnauthenticated, "Oxide did not accept the API token", true};
    case 403:
      return {C::kPermissionDenied, "the API token's user may not do this", true};
    case 404:
    case 410:
      return {C::kNotFound, nullptr};
    case 409:
      if (Has(m, "boot disk cannot be detached"))
        return {C::kFailedPrecondition, "Oxide does not detach an instance's boot disk"};
      return {C::kAborted, "conflicting operation in progress; retry later"};
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return {C::kUnavailable, "the Oxide API is unavailable"};
    case 507:
      return {C::kResourceExhausted, "not enough Oxide storage (silo quota or capacity)", true};
    default:
      if (status >= 400 && status < 500) return {C::kInternal, "request rejected by Oxide", true};
      return {C::kUnknown, "unexpected answer from Oxide", true};
  }
}

std::string Attempts(const HttpResponse& response) {
  if (response.attempts <= 1) return "";
  return " after " + std::to_string(response.attempts) + " attempts";
}

}  // namespace

std::string OxideRequestId(const HttpResponse& response) {
  if (!response.request_id.empty()) return response.request_id;
  return ParseErrorBody(response.body).request_id;
}

std::string RequestIdSuffix(const HttpResponse& response) {
  std::string id = OxideRequestId(response);
  return id.empty() ? "" : " (oxide request id " + id + ")";
}

Status StatusFromResponse(std::string_view what, const HttpResponse& response) {
  const std::string prefix(what);
  switch (response.transport_error) {
    case TransportError::kNone:
      break;
    case TransportError::kTimeout:
      return {StatusCode::kDeadlineExceeded, prefix + ": the Oxide API did not answer in time" +
                                                 Attempts(response) + ": " +
                                                 response.transport_message};
    case TransportError::kTls:
      return Unavailable(prefix + ": TLS with the Oxide API failed (is --oxide-ca-file right?): " +
                         response.transport_message)
          .MarkOperatorMustFix();
    case TransportError::kConnect:
    case TransportError::kOther:
      return Unavailable(prefix + ": cannot reach the Oxide API" + Attempts(response) + ": " +
                         response.transport_message);
  }
  if (response.status >= 200 && response.status < 300) return Status::Ok();
  OxideError error = ParseErrorBody(response.body);
  const Row row = Classify(response.status, error);
  std::string message = prefix + ": ";
  if (row.rule != nullptr) message += std::string(row.rule) + ": ";
  message += error.message.empty()
                 ? "HTTP " + std::to_string(response.status)
                 : error.message + " (HTTP " + std::to_string(response.status) + ")";
  message += Attempts(response);
  message += RequestIdSuffix(response);
  Status status(row.code, std::move(message));
  if (row.operator_must_fix) status.MarkOperatorMustFix();
  status.SetOxideRequest(OxideRequestId(response), "");
  return status;
}

}  // namespace oxide::backend
