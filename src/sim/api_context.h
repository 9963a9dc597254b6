// What an API handler gets: the parsed call (request, route params, query) with a reply
// function, and the services it may use. Also the dropshot-style extractors (path, query,
// body) and the auth check; they return ApiResult/ApiStatus and never throw.
// Event-loop thread only.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_error.h"
#include "api_result.h"
#include "http_types.h"
#include "model.h"
#include "names.h"
#include "timeline.h"
#include "url.h"

namespace oxide_sim {

class GuestDevices;

struct ApiCall {
  std::string request_id;
  std::string operation;
  std::map<std::string, std::string> path_params;
  QueryPairs query;
  HttpRequest request;
  std::function<void(HttpResponse)> reply;  // set by the dispatcher; call exactly once

  void RespondJson(int status, const nlohmann::ordered_json& body) const;
  void RespondEmpty(int status) const;
  void RespondError(const ApiError& error) const;
};
using CallPtr = std::shared_ptr<ApiCall>;

struct AuthConfig {
  // The accepted tokens, each "oxide-token-...": the --token one at start; the control API may
  // set several at once (a rotation: old and new both valid for a while).
  std::vector<std::string> tokens;
  bool accepts(const std::string& token) const {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
  }
};

struct Services {
  Model& model;
  Timeline& timeline;
  GuestDevices& guest;
  const AuthConfig& auth;
};

// Extractors; each fails with the framework's 400 (no error_code).
ApiResult<NameOrId> PathNameOrId(const ApiCall& call, const std::string& key);
ApiResult<std::optional<std::string>> QueryValue(const ApiCall& call, const std::string& key);
ApiResult<std::optional<NameOrId>> QueryNameOrId(const ApiCall& call, const std::string& key);
ApiResult<NameOrId> RequiredQueryProject(const ApiCall& call);
ApiResult<nlohmann::json> BodyJson(const ApiCall& call);

// A body read by json_reader: its detail error becomes dropshot's "unable to parse JSON
// body: ..." 400.
template <typename T>
ApiResult<T> BodyField(oxide::StatusOr<T> read) {
  if (!read.ok()) return bad_json_body(read.status().message());
  return std::move(read).value();
}
ApiStatus BodyCheck(const oxide::Status& read);

// 401 unless the request carries "Authorization: Bearer <the configured token>".
ApiStatus Authenticate(const Services& services, const ApiCall& call);

// Answers a delete whose record is already gone: 204 at once in async mode, otherwise after the
// delete saga's delay (the resource stays freezable under `key` meanwhile).
void RespondAfterDeleteSaga(Services& services, const CallPtr& call, ResourceKey key);

}  // namespace oxide_sim
