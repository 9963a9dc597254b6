#include "engine/oxide_health.h"

#include <algorithm>
#include <ctime>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {

namespace {
constexpr const char* kRejected = "Oxide rejects the API token";
constexpr int kUnauthorized = 401;

// No answer from Oxide itself: the request did not get through, or what answered is not well
// (5xx: a proxy with no Oxide behind it, or Oxide failing). Anything else is an answer.
bool NoAnswer(const backend::HttpResponse& response) {
  return response.transport_error != backend::TransportError::kNone || response.status == 0 ||
         response.status >= 500;
}

std::string Seconds(std::chrono::milliseconds span) {
  return std::to_string(span.count() / 1000) + "s";
}
}  // namespace

std::string Rfc3339Utc(int64_t wall_ms) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

OxideHealth::OxideHealth(Clock* clock, backend::OxideClient* oxide, std::chrono::milliseconds grace,
                         std::chrono::milliseconds period)
    : clock_(clock), oxide_(oxide), grace_(grace), period_(period) {
  oxide_->token().set_observer(this);
  oxide_->set_answer_observer(this);
  Publish();  // all well until Oxide says otherwise (or does not answer for the grace)
}

OxideHealth::~OxideHealth() {
  *alive_ = false;
  oxide_->token().set_observer(nullptr);
  oxide_->set_answer_observer(nullptr);
  if (next_ != 0) clock_->CancelTimer(next_);
  if (grace_timer_ != 0) clock_->CancelTimer(grace_timer_);
}

void OxideHealth::Start() {
  Check();
}

void OxideHealth::Publish() const {
  metrics::PluginFamilies& families = metrics::Families();
  families.oxide_api_up.With({}).Set(api_up() ? 1 : 0);
  families.oxide_token_valid.With({}).Set(token_valid() ? 1 : 0);
  families.oxide_project_found.With({}).Set(project_found() ? 1 : 0);
}

void OxideHealth::TokenReplaced() {
  if (checking_) {
    check_again_ = true;  // the check under way may have sent the old token
    return;
  }
  ScheduleCheck(std::chrono::milliseconds(0));
}

// The transport reloaded the token source after a 401 and it still holds the refused token. The
// same final 401 reaches OxideAnswered too; either way it is a suspicion for the check to decide.
void OxideHealth::TokenRejected() {
  if (checking_ || token_ == TokenState::kRejected) return;
  token_ = TokenState::kSuspect;
  RecheckWithin(std::chrono::milliseconds(0));
}

void OxideHealth::OxideAnswered(const backend::HttpResponse& response) {
  if (NoAnswer(response)) {
    if (!outage_since_) OutageStarted();
    return;
  }
  if (outage_since_) OutageEnded();
  // A 401 to the check's own request is the check's to judge (its callback runs next); one to
  // another call while the check is under way is not confirmed by it when the check succeeds.
  if (response.status == kUnauthorized) TokenRejected();
}

void OxideHealth::OutageStarted() {
  outage_since_ = clock_->Now();
  outage_since_wall_ms_ = clock_->WallMillis();
  outage_reported_ = false;
  log::Debug("Oxide does not answer", {{"grace", Seconds(grace_)}});
  if (grace_.count() == 0) {
    OutagePassedGrace();
  } else {
    grace_timer_ = clock_->StartTimer(grace_, [this] {
      grace_timer_ = 0;
      if (outage_since_ && !outage_reported_) OutagePassedGrace();
    });
  }
  RecheckWithin(backoff_);  // recovery is noticed even when no call comes
}

void OxideHealth::OutagePassedGrace() {
  outage_reported_ = true;
  Publish();
  log::Error("cannot reach the Oxide API",
             {{"since", Rfc3339Utc(outage_since_wall_ms_)}, {"grace", Seconds(grace_)}});
}

void OxideHealth::OutageEnded() {
  // Info when the outage was reported (the gauges said so), debug for a blip inside the grace.
  const bool reported = outage_reported_;
  outage_since_.reset();
  outage_reported_ = false;
  if (grace_timer_ != 0) clock_->CancelTimer(grace_timer_);
  grace_timer_ = 0;
  if (reported) Publish();
  const log::Level level = reported ? log::Level::kInfo : log::Level::kDebug;
  if (log::Enabled(level))
    log::Write(level, "Oxide answers again", {{"since", Rfc3339Utc(outage_since_wall_ms_)}});
}

void OxideHealth::Rejected(const std::string& why) {
  const bool changed = token_ != TokenState::kRejected;
  token_ = TokenState::kRejected;
  if (!changed) return;
  Publish();  // the gauges first: whoever reads the record sees them
  log::Error(kRejected, {{"error", why}});
}

bool OxideHealth::NeedsRecheck() const {
  return token_ != TokenState::kAccepted || outage_since_.has_value();
}

void OxideHealth::RecheckWithin(std::chrono::milliseconds delay) {
  if (checking_) return;  // Checked() schedules the next one from what it learnt
  if (next_ != 0 && next_due_ <= clock_->Now() + delay) return;
  ScheduleCheck(delay);
}

void OxideHealth::ScheduleCheck(std::chrono::milliseconds delay) {
  if (next_ != 0) clock_->CancelTimer(next_);
  next_due_ = clock_->Now() + delay;
  next_ = clock_->StartTimer(delay, [this] {
    next_ = 0;
    Check();
  });
}

void OxideHealth::Check() {
  checking_ = true;
  oxide_->GetCurrentUser([this, alive = alive_](StatusOr<backend::CurrentUser> user) {
    if (!*alive) return;
    StatusCode code = user.status().code();
    if (user.ok()) {
      const bool recovering = token_ == TokenState::kRejected || !project_.ok();
      token_ = TokenState::kAccepted;
      CheckProject(recovering);
      return;
    }
    if (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied)
      Rejected(user.status().message());
    // Otherwise Oxide did not answer (OxideAnswered noted the outage): the token stays as it was.
    Checked();
  });
}

// The token works; the project must exist and be visible to the token's user too.
void OxideHealth::CheckProject(bool recovering) {
  oxide_->GetProject(
      oxide_->project(), [this, alive = alive_, recovering](StatusOr<backend::Project> project) {
        if (!*alive) return;
        // The gauges change before the log says so: whoever reads the record sees them.
        if (project.ok() || project.status().code() != StatusCode::kFailedPrecondition) {
          project_ = Status::Ok();
          Publish();
          if (recovering) log::Info("Oxide accepts the API token and the project again");
          if (!project.ok()) {
            log::Warn("cannot check the Oxide project", {{"error", project.status().message()}});
          }
        } else {
          const bool was_found = project_.ok();
          project_ = project.status();
          Publish();
          if (was_found)
            log::Error("the Oxide project is missing", {{"error", project.status().message()}});
        }
        Checked();
      });
}

void OxideHealth::Checked() {
  checking_ = false;
  if (check_again_) {
    check_again_ = false;
    Check();
    return;
  }
  if (NeedsRecheck()) {
    ScheduleCheck(backoff_);
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    return;
  }
  backoff_ = kFirstBackoff;
  ScheduleCheck(period_);
}

}  // namespace oxide::engine
