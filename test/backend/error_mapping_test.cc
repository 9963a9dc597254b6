// Unit tests of the error table (error_mapping.cc) with crafted Oxide answers: one per row.
#include "backend/error_mapping.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace oxide::backend {
namespace {

constexpr const char* kId = "5c0f6a0e-2f0b-4d0e-9d7e-6d1f1f3b2a10";

HttpResponse Answer(int status, const std::string& message, const std::string& error_code = "") {
  nlohmann::json body = {{"request_id", kId}, {"message", message}};
  if (!error_code.empty()) body["error_code"] = error_code;
  HttpResponse response;
  response.status = status;
  response.body = body.dump();
  response.request_id = kId;
  return response;
}

StatusCode CodeOf(const HttpResponse& response) {
  return StatusFromResponse("op", response).code();
}

TEST(ErrorMapping, EveryRowOfTheTable) {
  struct Row {
    int status;
    std::string message, error_code;
    StatusCode code;
  };
  const std::vector<Row> rows = {
      {400, "already exists: disk \"pv-a\"", "ObjectAlreadyExists", StatusCode::kAlreadyExists},
      {400, "cannot attach more than 12 disks to instance", "InvalidRequest",
       StatusCode::kResourceExhausted},
      {400, "cannot attach disk: instance is not fully stopped", "InvalidRequest",
       StatusCode::kFailedPrecondition},
      {400, "cannot detach disk: instance is not fully stopped", "",
       StatusCode::kFailedPrecondition},
      {400, "cannot attach disk \"pv-a\": disk is attached to another instance", "",
       StatusCode::kFailedPrecondition},
      {400, "disk must be in the same project as the instance", "",
       StatusCode::kFailedPrecondition},
      {400, "cannot detach disk \"pv-a\": disk is currently being attached", "",
       StatusCode::kAborted},
      {400, "cannot attach disk to instance in failed state", "", StatusCode::kFailedPrecondition},
      {400, "cannot detach disk from instance in starting state", "",
       StatusCode::kFailedPrecondition},
      {400, "cannot attach disk \"pv-a\": invalid state maintenance", "",
       StatusCode::kFailedPrecondition},
      {400, "disk cannot be deleted in state \"attached\"", "", StatusCode::kFailedPrecondition},
      {400, "snapshot cannot be deleted in state Creating", "", StatusCode::kFailedPrecondition},
      {400, "can't create a snapshot of a local storage disk", "", StatusCode::kFailedPrecondition},
      {400, "server does not support this API version: 2099.0.0", "",
       StatusCode::kFailedPrecondition},
      {400, "unsupported value for \"size\": total size must be at least 1 GiB", "InvalidValue",
       StatusCode::kOutOfRange},
      {400, "unsupported value for \"size\": total size must be less than 1023 GiB", "InvalidValue",
       StatusCode::kOutOfRange},
      {400, "unsupported value for \"size\": requested size over 10 PiB", "InvalidValue",
       StatusCode::kOutOfRange},
      {400, "disk size 1073741824 must be greater than or equal to snapshot size 2147483648", "",
       StatusCode::kOutOfRange},
      {400, "unsupported value for \"size\": total size must be a multiple of 1 GiB",
       "InvalidValue", StatusCode::kInvalidArgument},
      {400, "unable to parse JSON body: invalid block size 1000", "", StatusCode::kInvalidArgument},
      {400, "disk should either be UUID or project should be specified", "InvalidRequest",
       StatusCode::kInvalidArgument},
      {401, "credentials missing or invalid", "Unauthorized", StatusCode::kUnauthenticated},
      {403, "Forbidden", "Forbidden", StatusCode::kPermissionDenied},
      {404, "not found: disk with name \"pv-a\"", "ObjectNotFound", StatusCode::kNotFound},
      {405, "Method Not Allowed", "", StatusCode::kInternal},
      {409, "boot disk cannot be detached", "Conflict", StatusCode::kFailedPrecondition},
      {409, "volume repair lock", "Conflict", StatusCode::kAborted},
      {410, "Gone", "Gone", StatusCode::kNotFound},
      {429, "Too Many Requests", "", StatusCode::kUnavailable},
      {500, "Internal Server Error", "Internal", StatusCode::kUnavailable},
      {502, "Bad Gateway", "", StatusCode::kUnavailable},
      {503, "Service Unavailable", "ServiceNotAvailable", StatusCode::kUnavailable},
      {504, "Gateway Timeout", "", StatusCode::kUnavailable},
      {507, "Insufficient capacity: Not enough storage", "InsufficientCapacity",
       StatusCode::kResourceExhausted},
      {302, "", "", StatusCode::kUnknown},
  };
  for (const Row& row : rows) {
    const Status status = StatusFromResponse("op", Answer(row.status, row.message, row.error_code));
    EXPECT_EQ(status.code(), row.code) << row.status << " " << row.message;
    EXPECT_NE(status.message().find("(oxide request id " + std::string(kId) + ")"),
              std::string::npos)
        << status.ToString();
    if (!row.message.empty()) {
      EXPECT_NE(status.message().find(row.message), std::string::npos) << status.ToString();
    }
  }
}

TEST(ErrorMapping, SuccessIsOk) {
  for (int status : {200, 201, 202, 204})
    EXPECT_TRUE(StatusFromResponse("op", Answer(status, "")).ok());
}

TEST(ErrorMapping, MessagesExplainTheRule) {
  const Status status = StatusFromResponse(
      "attach disk \"pv-a\" to instance \"n1\"",
      Answer(400, "cannot attach disk: instance is not fully stopped", "InvalidRequest"));
  EXPECT_EQ(status.message(),
            "attach disk \"pv-a\" to instance \"n1\": Oxide attaches and detaches disks only "
            "while the instance is stopped (no hot-plug): cannot attach disk: instance is not "
            "fully stopped (HTTP 400) (oxide request id " +
                std::string(kId) + ")");
}

TEST(ErrorMapping, RequestIdFromTheBodyWhenTheHeaderIsMissing) {
  HttpResponse response = Answer(404, "not found");
  response.request_id.clear();
  EXPECT_NE(StatusFromResponse("op", response).message().find(kId), std::string::npos);
}

TEST(ErrorMapping, NonJsonBodyStillMaps) {
  HttpResponse response;
  response.status = 502;
  response.body = "<html>bad gateway</html>";
  response.attempts = 4;
  const Status status = StatusFromResponse("op", response);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("after 4 attempts"), std::string::npos) << status.ToString();
}

TEST(ErrorMapping, TransportFailures) {
  HttpResponse response;
  response.transport_error = TransportError::kTimeout;
  response.transport_message = "Operation timed out";
  EXPECT_EQ(CodeOf(response), StatusCode::kDeadlineExceeded);
  response.transport_error = TransportError::kConnect;
  EXPECT_EQ(CodeOf(response), StatusCode::kUnavailable);
  response.transport_error = TransportError::kTls;
  EXPECT_EQ(CodeOf(response), StatusCode::kUnavailable);
  response.transport_error = TransportError::kOther;
  EXPECT_EQ(CodeOf(response), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace oxide::backend
