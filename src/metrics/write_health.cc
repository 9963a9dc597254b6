#include "metrics/write_health.h"

namespace oxide::metrics {

void WriteHealth::Committed() {
  failures_in_a_row_.store(0, std::memory_order_release);
}

void WriteHealth::CommitFailed(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(why_mutex_);
    why_ = why;
  }
  failures_in_a_row_.fetch_add(1, std::memory_order_acq_rel);
}

void WriteHealth::SetRunningSince(int64_t now_ms) {
  running_since_ms_.store(now_ms, std::memory_order_relaxed);
}

Status WriteHealth::Check(int64_t now_ms, int64_t hung_after_ms) const {
  if (const uint64_t failed = failures_in_a_row(); failed > 0) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(why_mutex_);
      why = why_;
    }
    return FailedPrecondition(
        "the state database does not take writes: the last " +
        (failed == 1 ? std::string("commit") : std::to_string(failed) + " commits") + " failed (" +
        why +
        "); free space on or repair the volume under --state-db: the plugin keeps trying and is "
        "healthy again with the first commit that succeeds");
  }
  const int64_t since = running_since_ms_.load(std::memory_order_relaxed);
  if (since != 0 && now_ms - since > hung_after_ms) {
    return FailedPrecondition(
        "the state database does not take writes: a commit has been "
        "running for " +
        std::to_string((now_ms - since) / 1000) +
        " s; the disk under --state-db is hung or very slow");
  }
  return Status::Ok();
}

}  // namespace oxide::metrics
