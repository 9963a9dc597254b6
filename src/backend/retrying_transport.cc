#include "backend/retrying_transport.h"

#include <string>
#include <vector>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::backend {

struct RetryingTransport::Attempt {
  HttpRequest request;
  HttpCallback done;
  int number = 0;  // attempts made so far
  RetryingTransport* owner = nullptr;
};

namespace {

std::string Outcome(const HttpResponse& response) {
  if (response.transport_error == TransportError::kNone) return std::to_string(response.status);
  return response.transport_message;
}

}  // namespace

RetryingTransport::RetryingTransport(Clock* clock, std::unique_ptr<HttpTransport> inner,
                                     RetryOptions options)
    : clock_(clock), inner_(std::move(inner)), policy_(options) {}

RetryingTransport::~RetryingTransport() {
  for (Clock::TimerId timer : waiting_)
    clock_->CancelTimer(timer);
  inner_.reset();  // drops its callbacks, which point at this object, before it goes
}

void RetryingTransport::Send(HttpRequest request, HttpCallback done) {
  auto attempt = std::make_shared<Attempt>();
  attempt->request = std::move(request);
  attempt->done = std::move(done);
  attempt->owner = this;
  Try(std::move(attempt));
}

void RetryingTransport::Try(std::shared_ptr<Attempt> attempt) {
  ++attempt->number;
  // A request that is never repeated gives its strings away (method and idempotent stay, which
  // is all the retry policy reads of it); one that may be repeated keeps them for the next try.
  HttpRequest sent = attempt->request.idempotent ? attempt->request : std::move(attempt->request);
  inner_->Send(std::move(sent),
               [this, attempt](HttpResponse response) { OnAnswer(attempt, std::move(response)); });
}

void RetryingTransport::OnAnswer(std::shared_ptr<Attempt> attempt, HttpResponse response) {
  const auto delay = policy_.NextDelay(attempt->request, response, attempt->number);
  if (!delay) {
    response.attempts = attempt->number;
    HttpCallback done = std::move(attempt->done);
    done(std::move(response));
    return;
  }
  ++retries_;
  metrics::Families()
      .oxide_request_retries.With({attempt->request.operation, OutcomeLabel(response)})
      .Increment();
  log::Info("retrying an Oxide API request", {{"method", HttpMethodName(attempt->request.method)},
                                              {"target", attempt->request.target},
                                              {"outcome", Outcome(response)},
                                              {"oxide_request_id", response.request_id},
                                              {"attempt", std::to_string(attempt->number)},
                                              {"delay_ms", std::to_string(delay->count())}});
  // The id is known only once the timer exists; the closure finds it through this cell.
  auto timer = std::make_shared<Clock::TimerId>(0);
  *timer = clock_->StartTimer(*delay, [this, timer, attempt]() mutable {
    waiting_.erase(*timer);
    Try(std::move(attempt));
  });
  waiting_.insert(*timer);
}

}  // namespace oxide::backend
