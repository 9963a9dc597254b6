#include "engine/oxide_credentials_check.h"

#include "util/log.h"

namespace oxide::engine {

OxideCredentialsCheck::OxideCredentialsCheck(Clock* clock, backend::OxideClient* oxide,
                                             std::chrono::milliseconds period)
    : oxide_(oxide), period_(period), delayed_(clock) {}

OxideCredentialsCheck::~OxideCredentialsCheck() {
  *alive_ = false;
}

void OxideCredentialsCheck::Start() {
  Check();
}

void OxideCredentialsCheck::Check() {
  oxide_->GetCurrentUser([this, alive = alive_](StatusOr<backend::CurrentUser> user) {
    if (!*alive) return;
    StatusCode code = user.status().code();
    if (user.ok()) {
      CheckProject();
      return;
    } else if (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied) {
      if (health_.ok())
        log::Error("Oxide rejects the API token", {{"error", user.status().message()}});
      health_ = FailedPrecondition("Oxide rejects the API token: " + user.status().message());
    } else if (!warned_unreachable_) {
      log::Warn("cannot reach the Oxide API to check the token",
                {{"error", user.status().message()}});
      warned_unreachable_ = true;
    }
    delayed_.RunAfter(period_, [this] { Check(); });
  });
}

// The token works; the project must exist and be visible to the token's user too.
void OxideCredentialsCheck::CheckProject() {
  oxide_->GetProject(oxide_->project(), [this, alive = alive_](StatusOr<backend::Project> project) {
    if (!*alive) return;
    if (project.ok() || project.status().code() != StatusCode::kFailedPrecondition) {
      if (!health_.ok() || warned_unreachable_)
        log::Info("Oxide accepts the API token and the project again");
      health_ = Status::Ok();
      warned_unreachable_ = false;
      if (!project.ok()) {
        log::Warn("cannot check the Oxide project", {{"error", project.status().message()}});
      }
    } else {
      if (health_.ok())
        log::Error("the Oxide project is missing", {{"error", project.status().message()}});
      health_ = project.status();
    }
    delayed_.RunAfter(period_, [this] { Check(); });
  });
}

}  // namespace oxide::engine
