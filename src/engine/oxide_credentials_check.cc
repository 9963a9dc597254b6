#include "engine/oxide_credentials_check.h"

#include "util/log.h"

namespace oxide::engine {

namespace {
constexpr const char* kRejected = "Oxide rejects the API token";
}  // namespace

OxideCredentialsCheck::OxideCredentialsCheck(Clock* clock, backend::OxideClient* oxide,
                                             std::chrono::milliseconds period)
    : clock_(clock), oxide_(oxide), period_(period) {
  oxide_->token().set_observer(this);
}

OxideCredentialsCheck::~OxideCredentialsCheck() {
  *alive_ = false;
  oxide_->token().set_observer(nullptr);
  if (next_ != 0) clock_->CancelTimer(next_);
}

void OxideCredentialsCheck::Start() {
  Check();
}

void OxideCredentialsCheck::TokenReplaced() {
  if (checking_) {
    check_again_ = true;  // the check under way may have sent the old token
    return;
  }
  if (next_ != 0) clock_->CancelTimer(next_);
  next_ = 0;
  Check();
}

void OxideCredentialsCheck::TokenRejected() {
  Rejected(oxide_->token().can_refresh()
               ? "a call was answered 401 Unauthorized, and the token file still holds that token"
               : "a call was answered 401 Unauthorized");
}

void OxideCredentialsCheck::Rejected(const std::string& why) {
  if (health_.ok()) log::Error(kRejected, {{"error", why}});
  health_ = FailedPrecondition(std::string(kRejected) + ": " + why);
}

void OxideCredentialsCheck::Check() {
  checking_ = true;
  oxide_->GetCurrentUser([this, alive = alive_](StatusOr<backend::CurrentUser> user) {
    if (!*alive) return;
    StatusCode code = user.status().code();
    if (user.ok()) {
      CheckProject();
      return;
    } else if (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied) {
      Rejected(user.status().message());
    } else if (!warned_unreachable_) {
      log::Warn("cannot reach the Oxide API to check the token",
                {{"error", user.status().message()}});
      warned_unreachable_ = true;
    }
    Checked();
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
    Checked();
  });
}

void OxideCredentialsCheck::Checked() {
  checking_ = false;
  if (check_again_) {
    check_again_ = false;
    Check();
    return;
  }
  next_ = clock_->StartTimer(period_, [this] {
    next_ = 0;
    Check();
  });
}

}  // namespace oxide::engine
