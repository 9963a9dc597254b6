// Readiness of the controller's Oxide credentials: asks Oxide who the token belongs to, and then
// for the configured project, at start and every minute. Probe reports not ready while Oxide
// rejects the token (401/403) or the project does not exist for the token's user, which no
// restart can fix; an unreachable Oxide is logged but keeps the plugin ready, because every call
// then fails with UNAVAILABLE on its own. It also observes the client's ApiToken: a 401 to the
// token in use makes it not ready at once, and a reloaded token is checked at once (ready again
// when Oxide accepts it). Loop thread only.
#pragma once

#include <chrono>
#include <memory>

#include "backend/api_token.h"
#include "backend/oxide_client.h"
#include "loop/clock.h"
#include "util/status.h"

namespace oxide::engine {

class OxideCredentialsCheck : public backend::TokenObserver {
 public:
  OxideCredentialsCheck(Clock* clock, backend::OxideClient* oxide,
                        std::chrono::milliseconds period = std::chrono::minutes(1));
  ~OxideCredentialsCheck() override;
  OxideCredentialsCheck(const OxideCredentialsCheck&) = delete;
  OxideCredentialsCheck& operator=(const OxideCredentialsCheck&) = delete;

  void Start();
  Status Health() const { return health_; }

  void TokenReplaced() override;
  void TokenRejected() override;

 private:
  void Check();
  void CheckProject();
  void Checked();  // a check ended: the next one now (asked meanwhile) or after `period_`
  void Rejected(const std::string& why);

  Clock* clock_;
  backend::OxideClient* oxide_;
  std::chrono::milliseconds period_;
  Clock::TimerId next_ = 0;
  bool checking_ = false;     // a check's request is under way
  bool check_again_ = false;  // the token changed during it
  Status health_;
  bool warned_unreachable_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::engine
