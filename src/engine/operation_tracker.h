// Which operation each volume has in flight. A call for a volume with an operation under way
// either joins it (same kind, same arguments: it gets the same result) or is refused at once
// with ABORTED naming the pending operation. Operations outlive the RPCs that started them.
// Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/oxide_types.h"
#include "util/status.h"

namespace oxide::engine {

// What an operation produces: the disk as Oxide last reported it, or the error.
using OperationResult = StatusOr<backend::Disk>;
using OperationWaiter = std::function<void(const OperationResult&)>;

class OperationTracker {
 public:
  enum class Admission { kStart, kJoined, kRejected };

  // Admits a call for `key` (a volume). kStart: the caller must run the operation and call
  // Finish(key, ...) once. kJoined: `waiter` gets the running operation's result. kRejected:
  // `waiter` has already been called with ABORTED.
  Admission Admit(const std::string& key, const std::string& kind, const std::string& fingerprint,
                  OperationWaiter waiter);
  // Makes `alias` refer to the operation running for `key` (a create learns its volume id).
  void Alias(const std::string& key, const std::string& alias);
  // Ends the operation of `key` (and its aliases) and hands `result` to every waiter.
  void Finish(const std::string& key, const OperationResult& result);

  bool Busy(const std::string& key) const { return by_key_.count(key) != 0; }
  size_t in_flight() const { return operations_; }
  uint64_t joined() const { return joined_; }
  uint64_t rejected() const { return rejected_; }

 private:
  struct Operation {
    std::string kind, fingerprint;
    std::vector<std::string> keys;
    std::vector<OperationWaiter> waiters;
  };

  std::unordered_map<std::string, std::shared_ptr<Operation>> by_key_;
  size_t operations_ = 0;
  uint64_t joined_ = 0, rejected_ = 0;
};

}  // namespace oxide::engine
