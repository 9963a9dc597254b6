// Oxide error values and their HTTP form {request_id, error_code?, message}.
// Handlers return ApiError (in an ApiResult/ApiStatus, api_result.h); the model/rules layer
// still throws it (see api_handlers.h). The dispatcher turns it into a response. Any thread.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http_types.h"

namespace oxide_sim {

struct ApiError {
  int status = 500;
  std::optional<std::string> error_code;  // absent for framework (dropshot) errors
  std::string message;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Nexus errors (omicron common/src/api/external/error.rs).
ApiError object_not_found(const std::string& type, bool by_name, const std::string& value);
ApiError already_exists(const std::string& type, const std::string& name);
ApiError invalid_request(const std::string& message);
ApiError invalid_value(const std::string& label, const std::string& message);
ApiError unauthorized();
ApiError conflict(const std::string& message);
ApiError internal_error();
ApiError service_unavailable();
ApiError insufficient_capacity(const std::string& message);

// Framework errors: no error_code.
ApiError bad_json_body(const std::string& detail);
ApiError bad_query(const std::string& detail);
ApiError bad_path(const std::string& detail);
ApiError framework_error(int status, const std::string& message);

// The JSON error body with the given request id.
HttpResponse error_response(const ApiError& error, const std::string& request_id);
// A JSON response with content-type set.
HttpResponse json_response(int status, std::string body);

}  // namespace oxide_sim
