#include "engine/operation_tracker.h"

#include <utility>

namespace oxide::engine {

OperationTracker::Admission OperationTracker::Admit(const std::string& key, const std::string& kind,
                                                    const std::string& fingerprint,
                                                    OperationWaiter waiter) {
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
  waiter(
      Aborted("operation " + what + " pending for volume " + key + "; retry when it has finished"));
  return Admission::kRejected;
}

void OperationTracker::Alias(const std::string& key, const std::string& alias) {
  auto found = by_key_.find(key);
  if (found == by_key_.end() || by_key_.count(alias) != 0) return;
  found->second->keys.push_back(alias);
  by_key_.emplace(alias, found->second);
}

void OperationTracker::Finish(const std::string& key, const OperationResult& result) {
  auto found = by_key_.find(key);
  if (found == by_key_.end()) return;
  std::shared_ptr<Operation> operation = found->second;
  for (const std::string& k : operation->keys)
    by_key_.erase(k);
  --operations_;
  for (auto& waiter : operation->waiters)
    waiter(result);
}

}  // namespace oxide::engine
