// The loop's only cross-thread entry, Post(): tasks from many threads all run, on the loop
// thread, each thread's tasks in the order it posted them.
#include "loop/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

namespace oxide {
namespace {

TEST(EventLoop, PostedTasksRunOnTheLoopThreadInOrderPerPoster) {
  EventLoop loop;
  constexpr int kThreads = 4;
  constexpr int kTasksEach = 5000;
  std::map<int, std::vector<int>> seen;  // loop thread only
  int finished_posters = 0;              // loop thread only
  bool all_on_loop_thread = true;

  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&, t] {
      for (int i = 0; i < kTasksEach; ++i) {
        loop.Post([&, t, i] {
          all_on_loop_thread = all_on_loop_thread && loop.IsLoopThread();
          seen[t].push_back(i);
        });
      }
      loop.Post([&] {
        if (++finished_posters == kThreads) loop.Stop();
      });
    });
  }
  loop.Run();
  for (auto& poster : posters)
    poster.join();

  EXPECT_TRUE(all_on_loop_thread);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kThreads));
  for (auto& [thread, order] : seen) {
    ASSERT_EQ(order.size(), static_cast<size_t>(kTasksEach));
    for (int i = 0; i < kTasksEach; ++i)
      ASSERT_EQ(order[i], i) << "thread " << thread;
  }
}

TEST(EventLoop, ATaskMayPostAnotherAndStopFromInsideATask) {
  EventLoop loop;
  int steps = 0;
  loop.Post([&] {
    ++steps;
    loop.Post([&] {
      ++steps;
      loop.Stop();
    });
  });
  loop.Run();
  EXPECT_EQ(steps, 2);
}

}  // namespace
}  // namespace oxide
