#include "backend/api_token.h"

#include <utility>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::backend {

ApiToken::ApiToken(std::string token) : value_(std::move(token)) {}

void ApiToken::Replace(std::string token) {
  affinity_.Check("ApiToken::Replace");
  if (token.empty() || token == value_) return;
  log::RegisterSecret(log::SecretKind::kOxideToken, token);
  value_ = std::move(token);
  ++generation_;
  metrics::Families().token_reloads.Increment();
  if (observer_ != nullptr) observer_->TokenReplaced();
}

void ApiToken::Refresh(std::function<void()> done) {
  affinity_.Check("ApiToken::Refresh");
  if (!refresher_) return done();
  refresher_(std::move(done));
}

void ApiToken::ReportRejected() {
  affinity_.Check("ApiToken::ReportRejected");
  if (observer_ != nullptr) observer_->TokenRejected();
}

}  // namespace oxide::backend
