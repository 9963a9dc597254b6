// Maps (method, decoded path segments) to an Oxide operation (its OpenAPI operationId)
// plus the path parameters. Nothing fails here: no match is a RouteStatus. Pure; any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace oxide_sim {

enum class RouteStatus { kMatched, kNotFound, kMethodNotAllowed };

struct RouteMatch {
  RouteStatus status = RouteStatus::kNotFound;
  std::string operation;                      // e.g. "disk_view"
  std::map<std::string, std::string> params;  // e.g. {"disk": "pv-a"}
};

RouteMatch MatchRoute(const std::string& method, const std::vector<std::string>& segments);

// Every operationId the router knows (used to validate fault rules).
const std::vector<std::string>& KnownOperations();

}  // namespace oxide_sim
