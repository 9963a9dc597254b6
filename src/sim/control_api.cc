#include "control_api.h"

#include <stdexcept>
#include <utility>

#include "control_handlers.h"

namespace oxide_sim {
namespace {

// One row of the routing table: /__sim/<what>... with this many path segments (0 any) and this
// fourth segment (nullptr any), served by the handler of the request's method ("" any method:
// the handler tells its sub-paths apart itself).
struct ControlRoute {
  const char* what;
  size_t segments;
  const char* tail;
  std::vector<std::pair<std::string, ControlHandler>> methods;
};

// Every control endpoint (README.md, "Control API"). The first row that matches the path and
// has the request's method serves.
const std::vector<ControlRoute>& Routes() {
  static const std::vector<ControlRoute> table = {
      {"state", 0, nullptr, {{"GET", get_state}}},
      {"clock", 0, nullptr, {{"", clock_endpoint}}},
      {"auth", 0, nullptr, {{"", tokens_endpoint}}},
      {"reset", 0, nullptr, {{"POST", post_reset}}},
      {"config", 0, nullptr, {{"PUT", put_config}, {"GET", get_config}}},
      {"projects", 0, nullptr, {{"POST", post_project}}},
      {"instances", 2, nullptr, {{"POST", post_instance}}},
      {"instances", 3, nullptr, {{"PUT", put_instance}}},
      {"instances", 4, "device-order", {{"POST", post_device_order}}},
      {"disks", 3, nullptr, {{"PUT", put_disk_state}}},
      {"freeze", 0, nullptr, {{"POST", post_freeze}}},
      {"release", 0, nullptr, {{"POST", post_release}}},
      {"fault", 0, nullptr, {{"POST", post_fault}}},
      {"faults", 0, nullptr, {{"GET", get_faults}, {"DELETE", delete_faults}, {"PUT", put_faults}}},
      {"requests", 0, nullptr, {{"GET", get_requests}, {"DELETE", delete_requests}}},
  };
  return table;
}

// The handler for `method` on the path `segments`; nullptr when no row has one.
ControlHandler find_handler(const std::string& method, const std::vector<std::string>& segments) {
  for (const ControlRoute& route : Routes()) {
    if (segments.size() < 2 || segments[1] != route.what ||
        (route.segments != 0 && segments.size() != route.segments) ||
        (route.tail != nullptr && (segments.size() < 4 || segments[3] != route.tail))) {
      continue;
    }
    for (const auto& [allowed, handler] : route.methods) {
      if (allowed.empty() || allowed == method) return handler;
    }
  }
  return nullptr;
}

HttpResponse route(ControlContext& context, const HttpRequest& request,
                   const std::vector<std::string>& segments) {
  const nlohmann::json body =
      request.body.empty() ? nlohmann::json::object() : nlohmann::json::parse(request.body);
  if (!body.is_object()) throw std::invalid_argument("the body must be a JSON object");
  if (ControlHandler handler = find_handler(request.method, segments)) {
    return handler(ControlCall{context, request.method, segments, body});
  }
  const std::string what = segments.size() > 1 ? segments[1] : "";
  return control_error(
      404, "no such control endpoint: " + request.method + " /" + segments[0] + "/" + what);
}

}  // namespace

HttpResponse handle_control(ControlContext& context, const HttpRequest& request,
                            const std::vector<std::string>& segments, const QueryPairs&) {
  try {
    return route(context, request, segments);
  } catch (const std::out_of_range& problem) {
    return control_error(404, problem.what());
  } catch (const std::exception& problem) {
    return control_error(400, problem.what());
  }
}

}  // namespace oxide_sim
