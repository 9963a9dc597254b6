#include "backend/token_retry_transport.h"

#include <utility>

#include "util/log.h"

namespace oxide::backend {

struct TokenRetryTransport::Pending {
  HttpRequest request;  // kept to send it again
  HttpCallback done;
  bool resent = false;
};

namespace {
constexpr int kUnauthorized = 401;
}  // namespace

TokenRetryTransport::TokenRetryTransport(ApiToken* token, std::unique_ptr<HttpTransport> inner)
    : token_(token), inner_(std::move(inner)) {}

TokenRetryTransport::~TokenRetryTransport() {
  *alive_ = false;  // a refresh still under way must not call back into this object
  inner_.reset();
}

void TokenRetryTransport::Send(HttpRequest request, HttpCallback done) {
  if (!token_->can_refresh()) return inner_->Send(std::move(request), std::move(done));
  auto pending = std::make_shared<Pending>();
  pending->request = std::move(request);
  pending->done = std::move(done);
  SendPending(std::move(pending));
}

void TokenRetryTransport::SendPending(std::shared_ptr<Pending> pending) {
  HttpRequest copy = pending->request;
  inner_->Send(std::move(copy), [this, pending = std::move(pending)](HttpResponse response) {
    if (response.status == kUnauthorized && response.transport_error == TransportError::kNone) {
      OnUnauthorized(pending, std::move(response));
      return;
    }
    HttpCallback done = std::move(pending->done);
    done(std::move(response));
  });
}

void TokenRetryTransport::OnUnauthorized(std::shared_ptr<Pending> pending, HttpResponse response) {
  token_->Refresh([this, alive = alive_, pending = std::move(pending),
                   response = std::move(response)]() mutable {
    if (!*alive) return;
    const bool changed = token_->generation() != response.token_generation;
    if (changed && !pending->resent) {
      pending->resent = true;
      ++resent_;
      log::Info(
          "Oxide refused the previous API token; sending the request again with the "
          "reloaded one",
          {{"method", HttpMethodName(pending->request.method)},
           {"target", pending->request.target},
           {"oxide_request_id", response.request_id}});
      SendPending(std::move(pending));
      return;
    }
    if (!changed) token_->ReportRejected();
    HttpCallback done = std::move(pending->done);
    done(std::move(response));
  });
}

}  // namespace oxide::backend
