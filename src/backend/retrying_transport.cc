#include "backend/retrying_transport.h"

#include <string>
#include <vector>

#include "util/log.h"

namespace oxide::backend {

struct RetryingTransport::Attempt {
  HttpRequest request;
  HttpCallback done;
  int number = 0;  // attempts made so far
  RetryingTransport* owner = nullptr;
};

namespace {

struct TimerData {
  std::shared_ptr<void> attempt;  // keeps the Attempt alive while the timer waits
};

std::string Outcome(const HttpResponse& response) {
  if (response.transport_error == TransportError::kNone) return std::to_string(response.status);
  return response.transport_message;
}

}  // namespace

RetryingTransport::RetryingTransport(uv_loop_t* loop, std::unique_ptr<HttpTransport> inner,
                                     RetryOptions options)
    : loop_(loop), inner_(std::move(inner)), policy_(options) {}

RetryingTransport::~RetryingTransport() {
  for (uv_timer_t* timer : std::vector<uv_timer_t*>(waiting_.begin(), waiting_.end())) {
    uv_timer_stop(timer);
    uv_close(reinterpret_cast<uv_handle_t*>(timer), [](uv_handle_t* h) {
      delete static_cast<TimerData*>(h->data);
      delete reinterpret_cast<uv_timer_t*>(h);
    });
  }
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
  log::Info("retrying an Oxide API request", {{"method", HttpMethodName(attempt->request.method)},
                                              {"target", attempt->request.target},
                                              {"outcome", Outcome(response)},
                                              {"oxide_request_id", response.request_id},
                                              {"attempt", std::to_string(attempt->number)},
                                              {"delay_ms", std::to_string(delay->count())}});
  auto* timer = new uv_timer_t;
  uv_timer_init(loop_, timer);
  timer->data = new TimerData{attempt};
  waiting_.insert(timer);
  uv_timer_start(timer, &RetryingTransport::OnTimer, static_cast<uint64_t>(delay->count()), 0);
}

void RetryingTransport::OnTimer(uv_timer_t* timer) {
  auto* data = static_cast<TimerData*>(timer->data);
  auto attempt = std::static_pointer_cast<Attempt>(data->attempt);
  RetryingTransport* self = attempt->owner;
  self->waiting_.erase(timer);
  uv_close(reinterpret_cast<uv_handle_t*>(timer), [](uv_handle_t* h) {
    delete static_cast<TimerData*>(h->data);
    delete reinterpret_cast<uv_timer_t*>(h);
  });
  self->Try(std::move(attempt));
}

}  // namespace oxide::backend
