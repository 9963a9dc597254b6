#include "api_context.h"

#include "json_reader.h"

namespace oxide_sim {

void ApiCall::RespondJson(int status, const nlohmann::ordered_json& body) const {
  reply(json_response(status, body.dump()));
}

void ApiCall::RespondEmpty(int status) const {
  HttpResponse response;
  response.status = status;
  reply(std::move(response));
}

void ApiCall::RespondError(const ApiError& error) const {
  reply(error_response(error, request_id));
}

ApiResult<NameOrId> PathNameOrId(const ApiCall& call, const std::string& key) {
  auto found = call.path_params.find(key);
  if (found == call.path_params.end()) {
    return internal_error();  // a route table mistake
  }
  auto parsed = ParseNameOrId(found->second);
  if (!parsed.ok()) return bad_path(parsed.status().message());
  return *std::move(parsed);
}

ApiResult<std::optional<std::string>> QueryValue(const ApiCall& call, const std::string& key) {
  std::optional<std::string> found;
  for (const auto& [name, value] : call.query) {
    if (name != key) continue;
    if (found) return bad_query("duplicate field `" + key + "`");
    found = value;
  }
  return found;
}

ApiResult<std::optional<NameOrId>> QueryNameOrId(const ApiCall& call, const std::string& key) {
  std::optional<std::string> text;
  SIM_ASSIGN_OR_RETURN(text, QueryValue(call, key));
  if (!text) return std::optional<NameOrId>();
  auto parsed = ParseNameOrId(*text);
  if (!parsed.ok()) return bad_query(parsed.status().message());
  return std::optional<NameOrId>(*std::move(parsed));
}

ApiResult<NameOrId> RequiredQueryProject(const ApiCall& call) {
  std::optional<NameOrId> project;
  SIM_ASSIGN_OR_RETURN(project, QueryNameOrId(call, "project"));
  if (!project) return bad_query("missing field `project`");
  return *project;
}

ApiResult<nlohmann::json> BodyJson(const ApiCall& call) {
  if (call.request.body_too_large) {
    return framework_error(400, "request body exceeded maximum size of 1048576 bytes");
  }
  if (const std::string* type = call.request.header("content-type")) {
    std::string mime = type->substr(0, type->find(';'));
    while (!mime.empty() && mime.back() == ' ')
      mime.pop_back();
    if (mime != "application/json") {
      return framework_error(415,
                             "expected content type \"application/json\", got \"" + *type + "\"");
    }
  }
  return BodyField(ParseJsonText(call.request.body));
}

ApiStatus BodyCheck(const oxide::Status& read) {
  if (!read.ok()) return bad_json_body(read.message());
  return ApiStatus::Ok();
}

void RespondAfterDeleteSaga(Services& services, const CallPtr& call, ResourceKey key) {
  if (services.model.timing.async_mode) {
    call->RespondEmpty(204);
    return;
  }
  services.timeline.Run(services.model.timing.delete_delay_ms, std::move(key),
                        [call]() { call->RespondEmpty(204); });
}

ApiStatus Authenticate(const Services& services, const ApiCall& call) {
  const std::string* header = call.request.header("authorization");
  if (header == nullptr) return unauthorized();
  static const std::string kScheme = "Bearer ";
  if (header->compare(0, kScheme.size(), kScheme) != 0) return unauthorized();
  const std::string token = header->substr(kScheme.size());
  // Tokens without the prefix are ignored as if absent; others must match.
  if (token.rfind("oxide-token-", 0) != 0 || !services.auth.accepts(token)) return unauthorized();
  return ApiStatus::Ok();
}

}  // namespace oxide_sim
