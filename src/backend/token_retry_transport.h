// An HttpTransport that turns a token rotation into no failed call: when Oxide answers 401, it
// asks the ApiToken to re-read its source at once; if the token changed since the request was
// sent, the request goes out once more with the new one (Oxide refused it before doing anything,
// so even a create may be sent again). If the token has not changed, the 401 is the answer and
// the ApiToken reports the rejection (the Oxide health check confirms it and sets
// oxide_csi_oxide_token_valid). Sits between the OxideClient and the RetryingTransport. With a
// token that cannot change (OXIDE_TOKEN) requests pass straight through, uncopied. Loop thread
// only.
#pragma once

#include <cstdint>
#include <memory>

#include "backend/api_token.h"
#include "backend/http_types.h"

namespace oxide::backend {

class TokenRetryTransport : public HttpTransport {
 public:
  // `token` must outlive this transport.
  TokenRetryTransport(ApiToken* token, std::unique_ptr<HttpTransport> inner);
  // Drops the callbacks of requests under way (they point at this object) before it goes.
  ~TokenRetryTransport() override;
  TokenRetryTransport(const TokenRetryTransport&) = delete;
  TokenRetryTransport& operator=(const TokenRetryTransport&) = delete;

  void Send(HttpRequest request, HttpCallback done) override;

  HttpTransport& inner() { return *inner_; }
  // Requests sent again after a 401 because the token had changed meanwhile.
  uint64_t resent() const { return resent_; }

 private:
  struct Pending;
  void SendPending(std::shared_ptr<Pending> pending);
  void OnUnauthorized(std::shared_ptr<Pending> pending, HttpResponse response);

  ApiToken* token_;
  std::unique_ptr<HttpTransport> inner_;
  uint64_t resent_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::backend
