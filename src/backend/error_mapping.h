// The one place where an Oxide outcome (HTTP status, error_code, message, or a transport
// failure after retries) becomes a Status with a gRPC code and a message a person can act on.
// The table is in error_mapping.cc and src/backend/README.md. Pure: any thread.
#pragma once

#include <string_view>

#include "backend/http_types.h"
#include "util/status.h"

namespace oxide::backend {

// OK for a 2xx answer. `what` names the request for a person, e.g.
// `attach disk "pv-a" to instance "node-1"`; it must not contain secrets. The message carries
// Oxide's message and request id: "<what>: <rule>: <oxide message> (oxide request id <id>)".
// The Status also carries the request id (Status::oxide_request_id) and, where retrying cannot
// help (401, 403, 507, TLS, API version, ...), Status::operator_must_fix.
Status StatusFromResponse(std::string_view what, const HttpResponse& response);

// The x-request-id header, else the error body's request_id, else "".
std::string OxideRequestId(const HttpResponse& response);

// "(oxide request id <id>)", or "" when the response had none.
std::string RequestIdSuffix(const HttpResponse& response);

}  // namespace oxide::backend
