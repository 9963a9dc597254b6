// Which operation each volume or snapshot has in flight. A call for an object with an operation
// under way either joins it (same kind, same arguments: it gets the same result) or is refused at
// once with ABORTED naming the pending operation. Operations outlive the RPCs that started them,
// so a shutdown waits for them (OperationsInFlight: what is running, and a call when none is).
// Loop thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/oxide_types.h"
#include "util/status.h"

namespace oxide::engine {

// The operations an engine has in flight, as a graceful shutdown sees them (app/shutdown.h).
class OperationsInFlight {
 public:
  virtual ~OperationsInFlight() = default;
  virtual size_t in_flight() const = 0;
  // One line per operation: its kind and key(s), e.g. "CreateVolume csi-1f2e…".
  virtual std::vector<std::string> Describe() const = 0;
  // `idle` runs once, when no operation is left in flight (at once if none is).
  virtual void WhenIdle(std::function<void()> idle) = 0;
};

template <typename Result>
class BasicOperationTracker final : public OperationsInFlight {
 public:
  using Waiter = std::function<void(const Result&)>;
  enum class Admission { kStart, kJoined, kRejected };

  // `subject` names what the keys are ("volume", "snapshot") in ABORTED messages.
  explicit BasicOperationTracker(std::string subject = "volume") : subject_(std::move(subject)) {}

  // Admits a call for `key`. kStart: the caller must run the operation and call Finish(key, ...)
  // once. kJoined: `waiter` gets the running operation's result. kRejected: `waiter` has already
  // been called with ABORTED.
  Admission Admit(const std::string& key, const std::string& kind, const std::string& fingerprint,
                  Waiter waiter) {
    auto found = by_key_.find(key);
    if (found == by_key_.end()) {
      auto operation = std::make_shared<Operation>();
      operation->kind = kind;
      operation->fingerprint = fingerprint;
      operation->keys.push_back(key);
      operation->waiters.push_back(std::move(waiter));
      by_key_.emplace(key, std::move(operation));
      ++operations_;
      return Admission::kStart;
    }
    Operation& running = *found->second;
    if (running.kind == kind && running.fingerprint == fingerprint) {
      running.waiters.push_back(std::move(waiter));
      ++joined_;
      return Admission::kJoined;
    }
    ++rejected_;
    std::string what = running.kind == kind ? running.kind + " with other arguments" : running.kind;
    waiter(Result(Aborted("operation " + what + " pending for " + subject_ + " " + key +
                          "; retry when it has finished")));
    return Admission::kRejected;
  }

  // Makes `alias` refer to the operation running for `key` (a create learns its object's id).
  void Alias(const std::string& key, const std::string& alias) { (void)Claim(key, alias); }

  // Makes `also` a second key of the operation running for `key` (one object known by two
  // names, e.g. a disk's name and its id), so a call for either joins or is refused. Ok when
  // `also` is now (or already was) this operation's; ABORTED naming the other operation when
  // another one holds it, and then nothing changes.
  Status Claim(const std::string& key, const std::string& also) {
    auto found = by_key_.find(key);
    if (found == by_key_.end()) return Status::Ok();
    auto held = by_key_.find(also);
    if (held == by_key_.end()) {
      found->second->keys.push_back(also);
      by_key_.emplace(also, found->second);
      return Status::Ok();
    }
    if (held->second == found->second) return Status::Ok();
    ++rejected_;
    return Aborted("operation " + held->second->kind + " pending for " + subject_ + " " + also +
                   "; retry when it has finished");
  }

  // Ends the operation of `key` (and its aliases) and hands `result` to every waiter.
  void Finish(const std::string& key, const Result& result) {
    auto found = by_key_.find(key);
    if (found == by_key_.end()) return;
    std::shared_ptr<Operation> operation = found->second;
    for (const std::string& k : operation->keys)
      by_key_.erase(k);
    --operations_;
    for (auto& waiter : operation->waiters)
      waiter(result);
    // A waiter may have started another operation: idle only if none is left.
    if (operations_ == 0 && !idle_listeners_.empty()) {
      std::vector<std::function<void()>> listeners = std::move(idle_listeners_);
      idle_listeners_.clear();
      for (auto& listener : listeners)
        listener();
    }
  }

  bool Busy(const std::string& key) const { return by_key_.count(key) != 0; }
  size_t in_flight() const override { return operations_; }

  std::vector<std::string> Describe() const override {
    std::vector<std::string> lines;
    std::unordered_set<const Operation*> seen;
    for (const auto& [key, operation] : by_key_) {
      if (!seen.insert(operation.get()).second) continue;
      std::string line = operation->kind;
      for (const std::string& k : operation->keys)
        line += " " + k;
      lines.push_back(std::move(line));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  void WhenIdle(std::function<void()> idle) override {
    if (operations_ == 0) return idle();
    idle_listeners_.push_back(std::move(idle));
  }

  uint64_t joined() const { return joined_; }
  uint64_t rejected() const { return rejected_; }

 private:
  struct Operation {
    std::string kind, fingerprint;
    std::vector<std::string> keys;
    std::vector<Waiter> waiters;
  };

  std::string subject_;
  std::unordered_map<std::string, std::shared_ptr<Operation>> by_key_;
  size_t operations_ = 0;
  uint64_t joined_ = 0, rejected_ = 0;
  std::vector<std::function<void()>> idle_listeners_;
};

// What a volume operation produces: the disk as Oxide last reported it, or the error.
using OperationResult = StatusOr<backend::Disk>;
using OperationWaiter = std::function<void(const OperationResult&)>;
using OperationTracker = BasicOperationTracker<OperationResult>;

}  // namespace oxide::engine
