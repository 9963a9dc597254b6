// Bounds how many mkfs run at once on this node (--max-concurrent-formats): mkfs of a large disk
// takes memory, and several at once have taken node plugins down elsewhere. A format waits its
// turn on the loop, holding no worker thread. Loop thread only.
#pragma once

#include <deque>
#include <functional>

namespace oxide::engine {

class FormatGate {
 public:
  explicit FormatGate(int limit) : limit_(limit < 1 ? 1 : limit) {}

  // Runs `start` now when fewer than the limit are running, otherwise once one ends. Whoever
  // `start` begins must call Leave() exactly once when its format has ended.
  void Enter(std::function<void()> start) {
    if (running_ < limit_) {
      ++running_;
      return start();
    }
    waiting_.push_back(std::move(start));
  }
  void Leave() {
    if (waiting_.empty()) {
      --running_;
      return;
    }
    std::function<void()> next = std::move(waiting_.front());
    waiting_.pop_front();
    next();
  }
  int running() const { return running_; }
  bool full() const { return running_ >= limit_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  const int limit_;
  int running_ = 0;
  std::deque<std::function<void()>> waiting_;
};

}  // namespace oxide::engine
