#include "api_error.h"

#include <nlohmann/json.hpp>

namespace oxide_sim {
namespace {
ApiError make(int status, std::optional<std::string> code, std::string message) {
  ApiError error;
  error.status = status;
  error.error_code = std::move(code);
  error.message = std::move(message);
  return error;
}
}  // namespace

ApiError object_not_found(const std::string& type, bool by_name, const std::string& value) {
  return make(404, "ObjectNotFound",
              "not found: " + type + (by_name ? " with name \"" : " with id \"") + value + "\"");
}
ApiError already_exists(const std::string& type, const std::string& name) {
  return make(400, "ObjectAlreadyExists", "already exists: " + type + " \"" + name + "\"");
}
ApiError invalid_request(const std::string& message) {
  return make(400, "InvalidRequest", message);
}
ApiError invalid_value(const std::string& label, const std::string& message) {
  return make(400, "InvalidValue", "unsupported value for \"" + label + "\": " + message);
}
ApiError unauthorized() {
  return make(401, "Unauthorized", "credentials missing or invalid");
}
ApiError conflict(const std::string& message) {
  return make(409, "Conflict", message);
}
ApiError internal_error() {
  return make(500, "Internal", "Internal Server Error");
}
ApiError service_unavailable() {
  return make(503, "ServiceNotAvailable", "Service Unavailable");
}
ApiError insufficient_capacity(const std::string& message) {
  return make(507, "InsufficientCapacity", "Insufficient capacity: " + message);
}
ApiError bad_json_body(const std::string& detail) {
  return make(400, std::nullopt, "unable to parse JSON body: " + detail);
}
ApiError bad_query(const std::string& detail) {
  return make(400, std::nullopt, "unable to parse query string: " + detail);
}
ApiError bad_path(const std::string& detail) {
  return make(400, std::nullopt, "bad parameter in URL path: " + detail);
}
ApiError framework_error(int status, const std::string& message) {
  return make(status, std::nullopt, message);
}

HttpResponse json_response(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  response.headers.emplace_back("content-type", "application/json");
  return response;
}

HttpResponse error_response(const ApiError& error, const std::string& request_id) {
  nlohmann::ordered_json body;
  body["request_id"] = request_id;
  if (error.error_code) body["error_code"] = *error.error_code;
  body["message"] = error.message;
  HttpResponse response = json_response(error.status, body.dump());
  for (const auto& header : error.headers)
    response.headers.push_back(header);
  return response;
}

}  // namespace oxide_sim
