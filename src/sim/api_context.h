// What an API handler gets: the parsed call (request, route params, query) with a reply
// function, and the services it may use. Also the dropshot-style extractors (path, query,
// body) and the auth check. Event-loop thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api_error.h"
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

  void respond_json(int status, const nlohmann::ordered_json& body) const;
  void respond_empty(int status) const;
  void respond_error(const ApiError& error) const;
};
using CallPtr = std::shared_ptr<ApiCall>;

struct AuthConfig {
  std::string token;  // the one accepted token, "oxide-token-..."
};

struct Services {
  Model& model;
  Timeline& timeline;
  GuestDevices& guest;
  const AuthConfig& auth;
};

// Extractors; each throws the framework's 400 (no error_code).
NameOrId path_name_or_id(const ApiCall& call, const std::string& key);
std::optional<std::string> query_value(const ApiCall& call, const std::string& key);
std::optional<NameOrId> query_name_or_id(const ApiCall& call, const std::string& key);
NameOrId required_query_project(const ApiCall& call);
nlohmann::json body_json(const ApiCall& call);

// 401 unless the request carries "Authorization: Bearer <the configured token>".
void authenticate(const Services& services, const ApiCall& call);

// Answers a delete whose record is already gone: 204 at once in async mode, otherwise after the
// delete saga's delay (the resource stays freezable under `key` meanwhile).
void respond_after_delete_saga(Services& services, const CallPtr& call, ResourceKey key);

// Runs `body`, turning a thrown ApiError into the error reply. For deferred steps.
void reply_on_error(const CallPtr& call, const std::function<void()>& body);

}  // namespace oxide_sim
