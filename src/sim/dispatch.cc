// The request pipeline: path checks, routing, fault injection, API-Version, handler,
// and the reply wrapper (x-request-id, request log, injected latency/drop).
// Every step returns its failure as a value (ApiResult/ApiStatus, or a struct with an error
// field); nothing here throws or catches. Handlers return ApiStatus (see api_handlers.h for
// how the still-throwing model layer is kept behind CatchModelErrors).
#include <array>
#include <cstdio>

#include "api_handlers.h"
#include "ids.h"
#include "router.h"
#include "simulator.h"

namespace oxide_sim {
namespace {

constexpr const char* kApiVersion = "2026081901.0.0";

// Parses MAJOR.MINOR.PATCH[-pre][+build]; nullopt + *error on failure.
std::optional<std::array<unsigned long long, 3>> ParseSemver(const std::string& text,
                                                             std::string* error) {
  static const char* kParts[] = {"major", "minor", "patch"};
  std::array<unsigned long long, 3> out{};
  size_t position = 0;
  for (int part = 0; part < 3; ++part) {
    if (position >= text.size()) {
      *error =
          std::string("unexpected end of input while parsing ") + kParts[part] + " version number";
      return std::nullopt;
    }
    if (text[position] < '0' || text[position] > '9') {
      *error = std::string("unexpected character '") + text[position] + "' while parsing " +
               kParts[part] + " version number";
      return std::nullopt;
    }
    unsigned long long value = 0;
    while (position < text.size() && text[position] >= '0' && text[position] <= '9') {
      value = value * 10 + static_cast<unsigned long long>(text[position++] - '0');
    }
    out[static_cast<size_t>(part)] = value;
    if (part < 2) {
      if (position >= text.size() || text[position] != '.') {
        *error = position >= text.size() ? std::string("unexpected end of input while parsing ") +
                                               kParts[part + 1] + " version number"
                                         : std::string("unexpected character '") + text[position] +
                                               "' after " + kParts[part] + " version number";
        return std::nullopt;
      }
      ++position;
    }
  }
  if (position < text.size() && text[position] != '-' && text[position] != '+') {
    *error =
        std::string("unexpected character '") + text[position] + "' after patch version number";
    return std::nullopt;
  }
  return out;
}

ApiStatus CheckApiVersion(const HttpRequest& request) {
  const std::string* header = request.header("api-version");
  if (header == nullptr) return ApiStatus::Ok();
  std::string problem;
  auto wanted = ParseSemver(*header, &problem);
  if (!wanted) return framework_error(400, "bad value for header \"api-version\": " + problem);
  auto supported = ParseSemver(kApiVersion, &problem);
  if (*wanted > *supported) {
    return framework_error(400, "server does not support this API version: " + *header);
  }
  return ApiStatus::Ok();
}

HttpResponse InjectedError(int status, uint32_t retry_after_s, const std::string& request_id) {
  if (status == 500) return error_response(internal_error(), request_id);
  if (status == 503) return error_response(service_unavailable(), request_id);
  ApiError throttled = framework_error(429, "Too Many Requests");
  throttled.headers.emplace_back("retry-after", std::to_string(retry_after_s));
  return error_response(throttled, request_id);
}

// Runs fn after ms on the loop (one-shot timer that frees itself).
void RunAfter(uv_loop_t* loop, uint64_t ms, std::function<void()> fn) {
  struct Job {
    uv_timer_t timer{};
    std::function<void()> fn;
  };
  auto* job = new Job{{}, std::move(fn)};
  job->timer.data = job;
  uv_timer_init(loop, &job->timer);
  uv_timer_start(
      &job->timer,
      [](uv_timer_t* timer) {
        auto* fired = static_cast<Job*>(timer->data);
        auto work = std::move(fired->fn);
        uv_close(reinterpret_cast<uv_handle_t*>(timer),
                 [](uv_handle_t* handle) { delete static_cast<Job*>(handle->data); });
        work();
      },
      ms, 0);
}

// How the request log names an injected fault ("" for none).
std::string FaultLabel(const FaultDecision& fault) {
  if (fault.status != 0) return std::to_string(fault.status);
  if (fault.drop) return "drop";
  if (fault.delay_ms > 0) return "latency";
  return "";
}

// The reply wrapper of one call: adds x-request-id, applies an injected drop, logs the request
// with its status (0 when dropped), then sends, after the injected latency if any.
std::function<void(HttpResponse)> MakeReply(uv_loop_t* loop, RequestLog* log, LoggedRequest entry,
                                            FaultDecision fault, Responder responder,
                                            std::string request_id) {
  return [loop, log, entry, fault, responder, request_id](HttpResponse response) mutable {
    response.headers.emplace_back("x-request-id", request_id);
    if (fault.drop) response.drop_connection = true;
    entry.status = response.drop_connection ? 0 : response.status;
    log->add(entry);
    if (fault.delay_ms == 0) {
      responder.send(std::move(response));
      return;
    }
    RunAfter(loop, fault.delay_ms, [responder, response]() { responder.send(response); });
  };
}

}  // namespace

void Simulator::Handle(HttpRequest&& request, Responder responder) {
  PathSplit path = SplitPath(request.raw_path);
  if (!path.error.empty()) {
    HttpResponse response = error_response(bad_path(path.error), new_uuid());
    log_.add({0, request.method, request.raw_path, request.raw_query, "", response.status, ""});
    responder.send(std::move(response));
    return;
  }
  if (!path.segments.empty() && path.segments[0] == "__sim") {
    auto query = ParseQuery(request.raw_query);
    responder.send(handle_control(control_, request, path.segments, query.value_or(QueryPairs{})));
    return;
  }
  HandleApi(std::move(request), std::move(responder), std::move(path.segments));
}

void Simulator::HandleApi(HttpRequest&& request, Responder responder,
                          std::vector<std::string> segments) {
  auto call = std::make_shared<ApiCall>();
  call->request_id = new_uuid();
  const RouteMatch match = MatchRoute(request.method, segments);
  call->operation = match.operation;
  call->path_params = match.params;
  const FaultDecision fault =
      match.status == RouteStatus::kMatched
          ? faults_.decide(match.operation, request.method, request.raw_path)
          : FaultDecision{};
  LoggedRequest entry{0, request.method,   request.raw_path, request.raw_query, match.operation,
                      0, FaultLabel(fault)};
  call->request = std::move(request);
  call->reply =
      MakeReply(loop_, &log_, std::move(entry), fault, std::move(responder), call->request_id);

  if (match.status == RouteStatus::kNotFound) {
    call->RespondError(framework_error(404, "Not Found"));
    return;
  }
  if (match.status == RouteStatus::kMethodNotAllowed) {
    call->RespondError(framework_error(405, "Method Not Allowed"));
    return;
  }
  if (fault.status != 0) {
    call->reply(InjectedError(fault.status, fault.retry_after_s, call->request_id));
    return;
  }
  if (ApiStatus version = CheckApiVersion(call->request); !version.ok()) {
    call->RespondError(version.error());
    return;
  }
  auto query = ParseQuery(call->request.raw_query);
  if (!query) {
    call->RespondError(bad_query("invalid percent-encoding"));
    return;
  }
  call->query = std::move(*query);
  const auto& handlers = ApiHandlers();
  const auto handler = handlers.find(call->operation);
  if (handler == handlers.end()) {  // a route without a handler: a table mistake
    std::fprintf(stderr, "oxide-sim: no handler for %s\n", call->operation.c_str());
    call->RespondError(internal_error());
    return;
  }
  if (ApiStatus handled = handler->second(services_, call); !handled.ok()) {
    call->RespondError(handled.error());
  }
}

}  // namespace oxide_sim
