#include "router.h"

#include <algorithm>

namespace oxide_sim {
namespace {

struct Route {
  const char* method;
  std::vector<std::string> pattern;  // "{name}" marks a parameter
  const char* operation;
};

const std::vector<Route>& Routes() {
  static const std::vector<Route> table = {
      {"GET", {"v1", "ping"}, "ping"},
      {"GET", {"v1", "me"}, "current_user_view"},
      {"GET", {"v1", "utilization"}, "utilization_view"},
      {"GET", {"v1", "projects", "{project}"}, "project_view"},
      {"PUT", {"v1", "projects", "{project}"}, "project_update"},
      {"DELETE", {"v1", "projects", "{project}"}, "project_delete"},
      {"GET", {"v1", "disks"}, "disk_list"},
      {"POST", {"v1", "disks"}, "disk_create"},
      {"GET", {"v1", "disks", "{disk}"}, "disk_view"},
      {"DELETE", {"v1", "disks", "{disk}"}, "disk_delete"},
      {"GET", {"v1", "snapshots"}, "snapshot_list"},
      {"POST", {"v1", "snapshots"}, "snapshot_create"},
      {"GET", {"v1", "snapshots", "{snapshot}"}, "snapshot_view"},
      {"DELETE", {"v1", "snapshots", "{snapshot}"}, "snapshot_delete"},
      {"GET", {"v1", "instances"}, "instance_list"},
      {"POST", {"v1", "instances"}, "instance_create"},
      {"GET", {"v1", "instances", "{instance}"}, "instance_view"},
      {"PUT", {"v1", "instances", "{instance}"}, "instance_update"},
      {"DELETE", {"v1", "instances", "{instance}"}, "instance_delete"},
      {"GET", {"v1", "instances", "{instance}", "disks"}, "instance_disk_list"},
      {"POST", {"v1", "instances", "{instance}", "disks", "attach"}, "instance_disk_attach"},
      {"POST", {"v1", "instances", "{instance}", "disks", "detach"}, "instance_disk_detach"},
      {"POST", {"v1", "instances", "{instance}", "start"}, "instance_start"},
      {"POST", {"v1", "instances", "{instance}", "stop"}, "instance_stop"},
  };
  return table;
}

bool Matches(const Route& route, const std::vector<std::string>& segments,
             std::map<std::string, std::string>* params) {
  if (route.pattern.size() != segments.size()) return false;
  std::map<std::string, std::string> found;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& part = route.pattern[i];
    if (part.front() == '{') {
      if (segments[i].empty()) return false;
      found[part.substr(1, part.size() - 2)] = segments[i];
    } else if (part != segments[i]) {
      return false;
    }
  }
  *params = std::move(found);
  return true;
}

}  // namespace

RouteMatch MatchRoute(const std::string& method, const std::vector<std::string>& segments) {
  RouteMatch result;
  for (const Route& route : Routes()) {
    std::map<std::string, std::string> params;
    if (!Matches(route, segments, &params)) continue;
    if (method == route.method) {
      result.status = RouteStatus::kMatched;
      result.operation = route.operation;
      result.params = std::move(params);
      return result;
    }
    result.status = RouteStatus::kMethodNotAllowed;
  }
  return result;
}

const std::vector<std::string>& KnownOperations() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Route& route : Routes())
      out.emplace_back(route.operation);
    return out;
  }();
  return names;
}

}  // namespace oxide_sim
