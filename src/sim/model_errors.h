// The boundary between the throwing model/rules layer (model.cc selectors, disk_rules.cc,
// instance_lifecycle.cc throw ApiError) and the value-returning handlers: CatchModelErrors
// wraps a handler so that such a throw comes back as its ApiStatus, and any other exception as
// a logged 500. The only try/catch on the API request path. Event-loop thread only.
#pragma once

#include <cstdio>
#include <exception>

#include "api_handlers.h"

namespace oxide_sim {

template <ApiHandler handler>
ApiStatus CatchModelErrors(Services& services, const CallPtr& call) {
  try {
    return handler(services, call);
  } catch (const ApiError& error) {
    return error;
  } catch (const std::exception& problem) {
    std::fprintf(stderr, "oxide-sim: internal error in %s: %s\n", call->operation.c_str(),
                 problem.what());
    return internal_error();
  }
}

}  // namespace oxide_sim
