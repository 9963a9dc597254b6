// The retry with backoff the node's two waits at start share (node/backoff_retry.h), on a
// ManualClock: the delays between attempts, the report line's period, and that a completion
// arriving after Stop or after the retry is gone goes nowhere.
#include "node/backoff_retry.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "support/manual_clock.h"

namespace oxide::node {
namespace {

using namespace std::chrono_literals;

class BackoffRetryTest : public ::testing::Test {
 protected:
  // Each attempt records the time it started and retries later (as a failing attempt does).
  BackoffRetry& Make() {
    retry_ = std::make_unique<BackoffRetry>(
        &clock_, BackoffRetry::Timing{.first_retry = 1s, .max_retry = 10s, .report_every = 60s},
        [this] {
          attempts_at_.push_back(clock_.elapsed());
          retry_->RetryLater();
        },
        [this] { ++reports_; });
    return *retry_;
  }

  testing::ManualClock clock_;
  std::unique_ptr<BackoffRetry> retry_;
  std::vector<std::chrono::milliseconds> attempts_at_;
  int reports_ = 0;
};

TEST_F(BackoffRetryTest, DelaysDoubleFromTheFirstRetryUpToTheMaximum) {
  BackoffRetry& retry = Make();
  retry.Start();
  retry.AttemptNow();
  clock_.Advance(45s);
  const std::vector<std::chrono::milliseconds> expected = {0s, 1s, 3s, 7s, 15s, 25s, 35s, 45s};
  EXPECT_EQ(attempts_at_, expected);
  EXPECT_EQ(retry.attempts(), 8);
  EXPECT_EQ(retry.next_delay(), 10s);
  retry.ResetDelay();
  EXPECT_EQ(retry.next_delay(), 1s);
}

TEST_F(BackoffRetryTest, ReportsEveryPeriodWhileRunningAndNothingAfterStop) {
  BackoffRetry& retry = Make();
  retry.Start();
  clock_.Advance(150s);
  EXPECT_EQ(reports_, 2);
  EXPECT_EQ(retry.WaitedSeconds().text, "150");
  retry.Stop();
  EXPECT_FALSE(retry.running());
  EXPECT_EQ(clock_.pending_timers(), 0U);
  clock_.Advance(120s);
  EXPECT_EQ(reports_, 2);
}

TEST_F(BackoffRetryTest, ACompletionAfterStopOrAfterTheRetryIsGoneGoesNowhere) {
  BackoffRetry& retry = Make();
  int outcomes = 0;
  std::function<void(int)> done = retry.Guard<int>([&outcomes](int) { ++outcomes; });
  retry.Start();
  done(1);
  EXPECT_EQ(outcomes, 1);
  retry.Stop();
  done(2);
  EXPECT_EQ(outcomes, 1);
  retry_.reset();
  done(3);
  EXPECT_EQ(outcomes, 1);
}

// Destroyed while still running (no Stop first): the guard must see that the retry is gone, not
// only that it stopped.
TEST_F(BackoffRetryTest, ACompletionAfterARunningRetryIsDestroyedGoesNowhere) {
  bool delivered = false;
  std::function<void(int)> done = Make().Guard<int>([&delivered](int) { delivered = true; });
  retry_->Start();
  ASSERT_TRUE(retry_->running());
  retry_.reset();  // no Stop() first
  done(1);
  EXPECT_FALSE(delivered);
}

}  // namespace
}  // namespace oxide::node
