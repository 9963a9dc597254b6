// The controller's current view of Oxide health, which Probe reports: whether Oxide accepts the
// API token, whether the configured project exists, and since when Oxide has not answered.
// It learns from every answer the Oxide client gets (any call: AnswerObserver) and from its own
// check (GET /v1/me, then the project), run at start, every `period` while all is well, and with
// backoff (1 s, 2 s, 4 s ... capped at 30 s) while the token is unverified, after a 401, or while
// Oxide does not answer. Rules (docs/probe.md):
//  - a 401 to an ordinary call only makes the token suspect and starts a check at once; the
//    token is "rejected" (Probe not ready) when the check's own GET /v1/me is refused (401/403);
//  - Oxide is unreachable from the first failure (transport error or 5xx) after the last answer;
//    Probe says so once that lasts longer than `grace` (0: at once); any HTTP answer below 500
//    ends it;
//  - a missing project makes Probe not ready, as before.
// It also observes the client's ApiToken: a reloaded token is checked at once. Loop thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backend/answer_observer.h"
#include "backend/api_token.h"
#include "backend/oxide_client.h"
#include "loop/clock.h"
#include "util/status.h"

namespace oxide::engine {

class OxideCredentialsCheck : public backend::TokenObserver, public backend::AnswerObserver {
 public:
  static constexpr std::chrono::milliseconds kFirstBackoff{1000};
  static constexpr std::chrono::milliseconds kMaxBackoff{30000};

  OxideCredentialsCheck(Clock* clock, backend::OxideClient* oxide,
                        std::chrono::milliseconds grace = std::chrono::seconds(60),
                        std::chrono::milliseconds period = std::chrono::minutes(1));
  ~OxideCredentialsCheck() override;
  OxideCredentialsCheck(const OxideCredentialsCheck&) = delete;
  OxideCredentialsCheck& operator=(const OxideCredentialsCheck&) = delete;

  void Start();
  // Ok when ready; otherwise why not (Probe's message).
  Status Health() const;

  void TokenReplaced() override;
  void TokenRejected() override;
  void OxideAnswered(const backend::HttpResponse& response) override;

 private:
  enum class TokenState { kUnverified, kAccepted, kSuspect, kRejected };

  void Check();
  void CheckProject(bool recovering);  // recovering: Probe said "not ready" before
  void Checked();  // a check ended: the next one now, after the backoff, or after `period_`
  bool NeedsRecheck() const;
  // Brings the next check forward to `delay` from now unless one is already due that soon.
  void RecheckWithin(std::chrono::milliseconds delay);
  void ScheduleCheck(std::chrono::milliseconds delay);
  void Rejected(const std::string& why);
  void OutageStarted();
  void OutageEnded();
  bool OutagePastGrace() const;

  Clock* clock_;
  backend::OxideClient* oxide_;
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds period_;
  std::chrono::milliseconds backoff_ = kFirstBackoff;
  Clock::TimerId next_ = 0;
  Clock::TimePoint next_due_{};
  Clock::TimerId grace_timer_ = 0;
  bool checking_ = false;     // a check's request is under way
  bool check_again_ = false;  // the token changed during it

  TokenState token_ = TokenState::kUnverified;
  std::string rejected_why_;
  Status project_;  // FAILED_PRECONDITION while the project is missing
  std::optional<Clock::TimePoint> outage_since_;  // first failure since the last answer
  int64_t outage_since_wall_ms_ = 0;
  bool outage_reported_ = false;  // the warning for this outage was logged
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// "2026-11-25T01:02:03Z": milliseconds since the epoch as an RFC 3339 UTC time (whole seconds).
std::string Rfc3339Utc(int64_t wall_ms);

}  // namespace oxide::engine
