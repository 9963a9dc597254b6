// The Oxide API token the transport sends now, numbered by generation, and the one observer that
// wants to hear when it is replaced (a reload from the token file) or refused by Oxide (a 401 to
// the token in use). A source that can be asked again (TokenFileWatch) installs a refresher;
// without one (OXIDE_TOKEN from the environment) the token never changes. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loop/loop_affinity.h"

namespace oxide::backend {

class TokenObserver {
 public:
  virtual ~TokenObserver() = default;
  virtual void TokenReplaced() = 0;  // the next requests carry a new token
  virtual void TokenRejected() = 0;  // Oxide answered 401 to the token in use
};

class ApiToken {
 public:
  using Refresher = std::function<void(std::function<void()> done)>;

  explicit ApiToken(std::string token);
  ApiToken(const ApiToken&) = delete;
  ApiToken& operator=(const ApiToken&) = delete;

  // Secret: never logged. Read for each new transfer, so kept cheap (no check here).
  const std::string& value() const { return value_; }
  // 1 for the token given at start, one more for each replacement.
  uint64_t generation() const { return generation_; }
  // Tokens installed after the first (exported as oxide_csi_token_reloads_total).
  uint64_t reloads() const { return generation_ - 1; }
  bool can_refresh() const { return static_cast<bool>(refresher_); }

  // A new, non-empty token for the next requests: registered with log::RegisterSecret (kOxideToken)
  // first, then the observer hears of it. The same value again changes nothing.
  void Replace(std::string token);
  // Asks the source to look again at once; `done` runs on the loop thread once value() is what
  // the source holds now (at once, inside this call, when there is no refresher).
  void Refresh(std::function<void()> done);
  void set_refresher(Refresher refresher) { refresher_ = std::move(refresher); }
  // Oxide refused the token in use (generation() when the request was sent).
  void ReportRejected();
  // At most one; null to stop. It must outlive this object or unset itself.
  void set_observer(TokenObserver* observer) { observer_ = observer; }

 private:
  std::string value_;
  uint64_t generation_ = 1;
  Refresher refresher_;
  TokenObserver* observer_ = nullptr;
  LoopAffinity affinity_;
};

}  // namespace oxide::backend
