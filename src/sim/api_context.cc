#include "api_context.h"

#include "json_reader.h"

namespace oxide_sim {

void ApiCall::respond_json(int status, const nlohmann::ordered_json& body) const {
  reply(json_response(status, body.dump()));
}

void ApiCall::respond_empty(int status) const {
  HttpResponse response;
  response.status = status;
  reply(std::move(response));
}

void ApiCall::respond_error(const ApiError& error) const {
  reply(error_response(error, request_id));
}

NameOrId path_name_or_id(const ApiCall& call, const std::string& key) {
  std::string problem;
  auto parsed = parse_name_or_id(call.path_params.at(key), &problem);
  if (!parsed) throw bad_path(problem);
  return *parsed;
}

std::optional<std::string> query_value(const ApiCall& call, const std::string& key) {
  std::optional<std::string> found;
  for (const auto& [name, value] : call.query) {
    if (name != key) continue;
    if (found) throw bad_query("duplicate field `" + key + "`");
    found = value;
  }
  return found;
}

std::optional<NameOrId> query_name_or_id(const ApiCall& call, const std::string& key) {
  auto text = query_value(call, key);
  if (!text) return std::nullopt;
  std::string problem;
  auto parsed = parse_name_or_id(*text, &problem);
  if (!parsed) throw bad_query(problem);
  return parsed;
}

NameOrId required_query_project(const ApiCall& call) {
  auto project = query_name_or_id(call, "project");
  if (!project) throw bad_query("missing field `project`");
  return *project;
}

nlohmann::json body_json(const ApiCall& call) {
  if (call.request.body_too_large) {
    throw framework_error(400, "request body exceeded maximum size of 1048576 bytes");
  }
  if (const std::string* type = call.request.header("content-type")) {
    std::string mime = type->substr(0, type->find(';'));
    while (!mime.empty() && mime.back() == ' ')
      mime.pop_back();
    if (mime != "application/json") {
      throw framework_error(415,
                            "expected content type \"application/json\", got \"" + *type + "\"");
    }
  }
  try {
    return parse_json_text(call.request.body);
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
}

void respond_after_delete_saga(Services& services, const CallPtr& call, ResourceKey key) {
  if (services.model.timing.async_mode) {
    call->respond_empty(204);
    return;
  }
  services.timeline.run(services.model.timing.delete_delay_ms, std::move(key),
                        [call]() { call->respond_empty(204); });
}

void authenticate(const Services& services, const ApiCall& call) {
  const std::string* header = call.request.header("authorization");
  if (header == nullptr) throw unauthorized();
  static const std::string kScheme = "Bearer ";
  if (header->compare(0, kScheme.size(), kScheme) != 0) throw unauthorized();
  const std::string token = header->substr(kScheme.size());
  // Tokens without the prefix are ignored as if absent; others must match.
  if (token.rfind("oxide-token-", 0) != 0 || token != services.auth.token) throw unauthorized();
}

void reply_on_error(const CallPtr& call, const std::function<void()>& body) {
  try {
    body();
  } catch (const ApiError& error) {
    call->respond_error(error);
  } catch (const std::exception&) {
    call->respond_error(internal_error());
  }
}

}  // namespace oxide_sim
