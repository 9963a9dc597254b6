// The controller's view of Oxide health, published as metrics and logs (never as Probe or
// liveness: an Oxide outage must not make Kubernetes restart or unready the plugin): whether
// Oxide answers, whether it accepts the API token, whether the configured project exists.
// Gauges oxide_csi_oxide_api_up, oxide_csi_oxide_token_valid and oxide_csi_oxide_project_found
// (0/1) follow it; each change to bad logs one error record, each recovery one info record.
// It learns from every answer the Oxide client gets (any call: AnswerObserver) and from its own
// check (GET /v1/me, then the project), run at start, every `period` while all is well, and with
// backoff (1 s, 2 s, 4 s ... capped at 30 s) while the token is unverified, after a 401, or while
// Oxide does not answer. Rules (docs/probe.md):
//  - Oxide is unreachable from the first failure (transport error or 5xx) after the last answer;
//    once that has lasted `grace` (0: at once), api_up and token_valid read 0 (the token cannot
//    be known good while Oxide does not answer); any HTTP answer below 500 ends it;
//  - a 401 to an ordinary call only makes the token suspect and starts a check at once; the
//    token is "rejected" (token_valid 0) when the check's own GET /v1/me is refused (401/403);
//  - a project Oxide says is missing makes project_found 0.
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

class OxideHealth : public backend::TokenObserver, public backend::AnswerObserver {
 public:
  static constexpr std::chrono::milliseconds kFirstBackoff{1000};
  static constexpr std::chrono::milliseconds kMaxBackoff{30000};

  OxideHealth(Clock* clock, backend::OxideClient* oxide,
              std::chrono::milliseconds grace = std::chrono::seconds(60),
              std::chrono::milliseconds period = std::chrono::minutes(1));
  ~OxideHealth() override;
  OxideHealth(const OxideHealth&) = delete;
  OxideHealth& operator=(const OxideHealth&) = delete;

  void Start();
  // What the gauges say: Oxide has answered within the grace; it accepts the token (and has
  // answered within the grace); the project exists (as far as Oxide last said).
  bool api_up() const { return !outage_reported_; }
  bool token_valid() const { return token_ != TokenState::kRejected && !outage_reported_; }
  bool project_found() const { return project_.ok(); }

  void TokenReplaced() override;
  void TokenRejected() override;
  void OxideAnswered(const backend::HttpResponse& response) override;

 private:
  enum class TokenState { kUnverified, kAccepted, kSuspect, kRejected };

  void Check();
  void CheckProject(bool recovering);  // recovering: the token or the project was bad before
  void Checked();  // a check ended: the next one now, after the backoff, or after `period_`
  bool NeedsRecheck() const;
  // Brings the next check forward to `delay` from now unless one is already due that soon.
  void RecheckWithin(std::chrono::milliseconds delay);
  void ScheduleCheck(std::chrono::milliseconds delay);
  void Rejected(const std::string& why);
  void OutageStarted();
  void OutagePassedGrace();
  void OutageEnded();
  // Sets the three gauges from the state above.
  void Publish() const;

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
  Status project_;  // FAILED_PRECONDITION while the project is missing
  std::optional<Clock::TimePoint> outage_since_;  // first failure since the last answer
  int64_t outage_since_wall_ms_ = 0;
  bool outage_reported_ = false;  // this outage has lasted the grace: logged, gauges at 0
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// "2026-11-25T01:02:03Z": milliseconds since the epoch as an RFC 3339 UTC time (whole seconds),
// as the logs give an outage's start.
std::string Rfc3339Utc(int64_t wall_ms);

}  // namespace oxide::engine
