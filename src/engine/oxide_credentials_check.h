// Readiness of the controller's Oxide credentials: asks Oxide who the token belongs to, and then
// for the configured project, at start and every minute. Probe reports not ready while Oxide
// rejects the token (401/403) or the project does not exist for the token's user, which no
// restart can fix; an unreachable Oxide is logged but keeps the plugin ready, because every call
// then fails with UNAVAILABLE on its own. Loop thread only.
#pragma once

#include <chrono>
#include <memory>

#include "backend/oxide_client.h"
#include "loop/delayed_tasks.h"
#include "util/status.h"

namespace oxide::engine {

class OxideCredentialsCheck {
 public:
  OxideCredentialsCheck(Clock* clock, backend::OxideClient* oxide,
                        std::chrono::milliseconds period = std::chrono::minutes(1));
  ~OxideCredentialsCheck();
  void Start();
  Status Health() const { return health_; }

 private:
  void Check();
  void CheckProject();

  backend::OxideClient* oxide_;
  std::chrono::milliseconds period_;
  DelayedTasks delayed_;
  Status health_;
  bool warned_unreachable_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::engine
