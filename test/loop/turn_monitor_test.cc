// The loop's turn monitor on a real libuv loop: time spent waiting for I/O is not counted as
// busy, a turn that blocks the loop is measured and warned about (once a minute), its CPU time
// is told apart from time off the CPU, and the summary's histogram and p99 bound add up.
#include "loop/turn_monitor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <sstream>
#include <vector>

#include "support/temp_dir.h"
#include "util/log.h"

namespace oxide {
namespace {

using namespace std::chrono_literals;

class TurnMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    fd_ = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    log::SetOutputFd(fd_);
  }
  void TearDown() override {
    log::SetOutputFd(STDERR_FILENO);
    close(fd_);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open";
  }
  // Runs `steps` one per timer expiry, `gap` apart, then stops `monitor` and lets the loop end.
  void RunSteps(TurnMonitor& monitor, std::chrono::milliseconds gap,
                std::vector<std::function<void()>> steps) {
    struct Context {
      std::vector<std::function<void()>> steps;
      size_t next = 0;
      TurnMonitor* monitor;
    } context{std::move(steps), 0, &monitor};
    uv_timer_t timer;
    uv_timer_init(&loop_, &timer);
    timer.data = &context;
    monitor.Start();
    uv_timer_start(
        &timer,
        [](uv_timer_t* handle) {
          auto* c = static_cast<Context*>(handle->data);
          if (c->next < c->steps.size()) return c->steps[c->next++]();
          c->monitor->Stop();
          uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
        },
        static_cast<uint64_t>(gap.count()), static_cast<uint64_t>(gap.count()));
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  std::vector<std::string> LogLines() {
    std::istringstream in(testing::ReadFile(dir_.File("log")));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }
  static std::chrono::nanoseconds ThreadCpu() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  }
  // Keeps the thread on the CPU for `duration` of its own CPU time (and at least as long).
  static void BusyFor(std::chrono::milliseconds duration) {
    const auto until = ThreadCpu() + duration;
    while (ThreadCpu() < until) {
    }
  }

  uv_loop_t loop_{};
  testing::TempDir dir_;
  int fd_ = -1;
};

TEST_F(TurnMonitorTest, WaitingForIoIsNotBusyTime) {
  TurnMonitor monitor(&loop_);
  // Four turns, each after 150 ms of waiting and doing nothing.
  RunSteps(monitor, 150ms, {[] {}, [] {}, [] {}});
  const TurnMonitor::Summary& summary = monitor.summary();
  EXPECT_GE(summary.turns, 3u);
  EXPECT_LT(summary.longest, 40ms) << "the wait was counted as work";
  EXPECT_LT(summary.busy, 100ms);
}

// libuv 1.44 loses a wait that a signal interrupts from its idle time: without the monitor's
// SIGCHLD watch, this turn would count the 150 ms wait before the child's exit as busy.
TEST_F(TurnMonitorTest, ATurnWhoseWaitASignalInterruptedIsLeftUnmeasured) {
  TurnMonitor monitor(&loop_);
  pid_t child = -1;
  RunSteps(monitor, 300ms,
           {[&] {
              child = fork();
              if (child == 0) {
                usleep(150'000);  // the child's exit (SIGCHLD) must land inside a loop wait
                _exit(0);
              }
            },
            [] {}});
  ASSERT_GT(child, 0);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_GE(monitor.summary().unmeasured, 1u);
  EXPECT_LT(monitor.summary().longest, 40ms) << "the interrupted wait was counted as work";
}

TEST_F(TurnMonitorTest, ATurnThatBlocksTheLoopIsMeasuredAndWarnedAboutOnceAMinute) {
  TurnMonitor monitor(&loop_, 20ms);
  RunSteps(monitor, 10ms, {[] {}, [] { BusyFor(60ms); }, [] {}, [] { BusyFor(30ms); }, [] {}});
  const TurnMonitor::Summary& summary = monitor.summary();
  EXPECT_GE(summary.longest, 60ms);
  EXPECT_LT(summary.longest, 1000ms);
  EXPECT_GE(summary.longest_cpu, 60ms);
  EXPECT_GE(summary.over_1ms_cpu, 2u);
  EXPECT_GE(summary.busy, 90ms);
  EXPECT_GE(summary.over_1ms, 2u);
  EXPECT_GE(summary.histogram.back(), 1u) << summary.HistogramText();  // > 50 ms
  int warnings = 0, summaries = 0;
  for (const std::string& line : LogLines()) {
    if (line.find("kept the loop thread busy") != std::string::npos) {
      ++warnings;
      EXPECT_NE(line.find("limit_ms=20"), std::string::npos) << line;
    }
    if (line.find("event loop turns") != std::string::npos) {
      ++summaries;
      EXPECT_NE(line.find("turns=" + std::to_string(summary.turns)), std::string::npos) << line;
      EXPECT_NE(line.find("histogram="), std::string::npos) << line;
      EXPECT_NE(line.find("longest_cpu_ms="), std::string::npos) << line;
    }
  }
  EXPECT_EQ(warnings, 1) << "the second stall, within the minute, is only counted";
  EXPECT_EQ(summaries, 1);
}

// A turn whose thread is off the CPU (here: asleep; under load: preempted by other threads) is
// long in wall time but not in CPU time.
TEST_F(TurnMonitorTest, TimeOffTheCpuCountsInWallTimeButNotInCpuTime) {
  TurnMonitor monitor(&loop_);
  // The sleep is the turn under measurement (60 ms off the CPU), not a wait for something.
  RunSteps(monitor, 10ms, {[] {}, [] { usleep(60'000); }, [] {}});
  const TurnMonitor::Summary& summary = monitor.summary();
  EXPECT_GE(summary.longest, 60ms);
  EXPECT_LT(summary.longest_cpu, 30ms);
}

TEST(TurnMonitorSummary, HistogramTextAndP99Bound) {
  TurnMonitor::Summary summary;
  EXPECT_EQ(summary.p99_at_most_us(), 0u);
  summary.turns = 200;
  summary.histogram[0] = 190;                  // <= 50 us
  summary.histogram[4] = 8;                    // <= 1000 us
  summary.histogram[6] = 2;                    // <= 5000 us
  EXPECT_EQ(summary.p99_at_most_us(), 1000u);  // 198 of 200 by 1 ms
  EXPECT_EQ(summary.HistogramText(),
            "<=50us:190 <=100us:0 <=250us:0 <=500us:0 <=1000us:8 <=2000us:0 <=5000us:2 "
            "<=10000us:0 <=50000us:0 >50000us:0");
  summary.histogram[6] = 0;
  summary.histogram[9] = 2;
  summary.histogram[4] = 6;
  summary.histogram[0] = 192;
  EXPECT_EQ(summary.p99_at_most_us(), 1000u);
  summary.histogram[9] = 5;
  summary.histogram[0] = 189;
  EXPECT_EQ(summary.p99_at_most_us(), UINT64_MAX);
}

}  // namespace
}  // namespace oxide
