// The loop's Clock: LoopClock's timers on a real libuv loop (run in due order, after their delay,
// never after being cancelled, and the loop ends once none is pending); ManualClock's time moves
// only by Advance, which runs what falls due in order with Now() at each timer's due time; and
// DelayedTasks on a ManualClock.
#include "loop/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "loop/delayed_tasks.h"
#include "support/manual_clock.h"

namespace oxide {
namespace {

using namespace std::chrono_literals;
using testing::ManualClock;

TEST(LoopClock, TimersRunInDueOrderAfterTheirDelayAndCancelledOnesNever) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    LoopClock clock(&loop);
    std::vector<std::string> ran;
    const auto start = clock.Now();
    Clock::TimePoint ran_late{};
    clock.StartTimer(20ms, [&] {
      ran.push_back("20");
      ran_late = clock.Now();
    });
    clock.StartTimer(5ms, [&] { ran.push_back("5"); });
    clock.StartTimer(5ms, [&] { ran.push_back("5 again"); });
    const Clock::TimerId cancelled = clock.StartTimer(10ms, [&] { ran.push_back("cancelled"); });
    clock.StartTimer(0ms, [&] { clock.CancelTimer(cancelled); });
    clock.CancelTimer(12345);  // unknown: nothing happens
    EXPECT_EQ(clock.pending_timers(), 5u);
    // Returns once no timer is pending: the clock's uv timer is stopped then.
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(ran, (std::vector<std::string>{"5", "5 again", "20"}));
    EXPECT_GE(ran_late - start, 20ms);
    EXPECT_EQ(clock.pending_timers(), 0u);
    EXPECT_GT(clock.WallMillis(), int64_t{1'600'000'000'000});
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // the clock's close callback
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST(LoopClock, DestroyingItDropsPendingTimers) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  bool ran = false;
  {
    LoopClock clock(&loop);
    clock.StartTimer(1ms, [&] { ran = true; });
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_FALSE(ran);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST(ManualClock, TimeMovesOnlyWhenAdvanced) {
  ManualClock clock;
  const auto start = clock.Now();
  const int64_t wall = clock.WallMillis();
  bool ran = false;
  clock.StartTimer(100ms, [&] { ran = true; });
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(99ms);
  EXPECT_FALSE(ran);
  EXPECT_EQ(clock.Now() - start, 99ms);
  clock.Advance(1ms);
  EXPECT_TRUE(ran);
  EXPECT_EQ(clock.WallMillis() - wall, 100);
  EXPECT_EQ(clock.elapsed(), 100ms);
}

TEST(ManualClock, AdvanceRunsDueTimersInOrderAtTheirDueTimeIncludingOnesTheyStart) {
  ManualClock clock;
  const auto start = clock.Now();
  std::vector<std::pair<std::string, std::chrono::milliseconds>> ran;
  auto at = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - start);
  };
  clock.StartTimer(30ms, [&] { ran.emplace_back("30", at()); });
  clock.StartTimer(10ms, [&] {
    ran.emplace_back("10", at());
    clock.StartTimer(5ms, [&] { ran.emplace_back("10+5", at()); });
    clock.StartTimer(50ms, [&] { ran.emplace_back("10+50", at()); });
  });
  clock.StartTimer(10ms, [&] { ran.emplace_back("10 again", at()); });
  const Clock::TimerId cancelled = clock.StartTimer(20ms, [&] { ran.emplace_back("20", at()); });
  clock.CancelTimer(cancelled);
  clock.CancelTimer(cancelled);  // twice: a no-op
  clock.Advance(40ms);
  using P = std::pair<std::string, std::chrono::milliseconds>;
  EXPECT_EQ(ran, (std::vector<P>{{"10", 10ms}, {"10 again", 10ms}, {"10+5", 15ms}, {"30", 30ms}}));
  EXPECT_EQ(at(), 40ms);
  EXPECT_EQ(clock.pending_timers(), 1u);
  EXPECT_EQ(clock.delays_started(),
            (std::vector<std::chrono::milliseconds>{30ms, 10ms, 10ms, 20ms, 5ms, 50ms}));
  ASSERT_TRUE(clock.AdvanceToNextTimer());
  EXPECT_EQ(ran.back(), (P{"10+50", 60ms}));
  EXPECT_FALSE(clock.AdvanceToNextTimer());
  EXPECT_EQ(at(), 60ms);
}

TEST(ManualClock, NegativeDelaysAreDueNow) {
  ManualClock clock;
  bool ran = false;
  clock.StartTimer(-5ms, [&] { ran = true; });
  clock.Advance(0ms);
  EXPECT_TRUE(ran);
}

TEST(DelayedTasks, RunOnTheClockAndDestroyingThemCancelsWhatHasNotRun) {
  ManualClock clock;
  std::vector<int> ran;
  {
    DelayedTasks tasks(&clock);
    tasks.RunAfter(20ms, [&] { ran.push_back(20); });
    tasks.RunAfter(10ms, [&] { ran.push_back(10); });
    tasks.RunAfter(50ms, [&] { ran.push_back(50); });
    EXPECT_EQ(tasks.pending(), 3u);
    clock.Advance(25ms);
    EXPECT_EQ(ran, (std::vector<int>{10, 20}));
    EXPECT_EQ(tasks.pending(), 1u);
  }
  EXPECT_EQ(clock.pending_timers(), 0u);
  clock.Advance(100ms);
  EXPECT_EQ(ran, (std::vector<int>{10, 20}));
}

}  // namespace
}  // namespace oxide
