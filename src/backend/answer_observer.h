// The hook through which the Oxide client reports every final answer (after retries and token
// reloads) to one listener: the controller's view of Oxide health
// (engine/oxide_health.h) learns from ordinary calls, not only from its own checks.
// Called on the loop thread, before the caller's callback; it must be cheap and must not call back
// into the client synchronously.
#pragma once

#include "backend/http_types.h"

namespace oxide::backend {

class AnswerObserver {
 public:
  virtual ~AnswerObserver() = default;
  // `response` is what the caller is about to get: an HTTP status, or a transport failure.
  virtual void OxideAnswered(const HttpResponse& response) = 0;
};

}  // namespace oxide::backend
