// Reading the typed Oxide objects out of response bodies with nlohmann_json. Unknown fields are
// ignored; a missing or mistyped required field is an INTERNAL Status naming the field, the
// request and Oxide's request id. Pure: any thread.
#pragma once

#include <string_view>

#include "backend/http_types.h"
#include "backend/oxide_types.h"
#include "util/status.h"

namespace oxide::backend {

// `what` names the request for the error message, e.g. `get disk "pv-a"`.
StatusOr<Disk> ParseDisk(std::string_view what, const HttpResponse& response);
StatusOr<Snapshot> ParseSnapshot(std::string_view what, const HttpResponse& response);
StatusOr<Project> ParseProject(std::string_view what, const HttpResponse& response);
StatusOr<Instance> ParseInstance(std::string_view what, const HttpResponse& response);
StatusOr<Utilization> ParseUtilization(std::string_view what, const HttpResponse& response);
StatusOr<CurrentUser> ParseCurrentUser(std::string_view what, const HttpResponse& response);
StatusOr<Page<Disk>> ParseDiskPage(std::string_view what, const HttpResponse& response);
StatusOr<Page<Snapshot>> ParseSnapshotPage(std::string_view what, const HttpResponse& response);

}  // namespace oxide::backend
