#include "store/group_commit.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "store/sqlite_handle.h"
#include "util/log.h"

namespace oxide::store {

GroupCommit::GroupCommit(uv_loop_t* loop, StateDb* db, std::function<uint64_t()> now_ms,
                         uint64_t heartbeat_period_ms)
    : db_(db),
      loop_(loop),
      now_ms_(now_ms ? std::move(now_ms) : [loop] { return uv_now(loop); }),
      prepare_(new uv_prepare_t),
      committed_(new uv_async_t),
      heartbeat_(new uv_timer_t),
      heartbeat_period_ms_(heartbeat_period_ms) {
  uv_timer_init(loop, heartbeat_);
  heartbeat_->data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(heartbeat_));  // never what keeps the loop running
  uv_prepare_init(loop, prepare_);
  prepare_->data = this;
  uv_async_init(loop, committed_, &GroupCommit::OnCommitted);
  committed_->data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(committed_));
  open_.seq = 1;
  thread_ = std::make_unique<CommitThread>(db->handle(), [this](CommitOutcome outcome) {
    {
      std::lock_guard<std::mutex> lock(outcomes_mutex_);
      outcomes_.push_back(std::move(outcome));
    }
    uv_async_send(committed_);
  });
}

GroupCommit::~GroupCommit() {
  FlushPending();
  thread_.reset();
  char longest[32], total[32];
  std::snprintf(longest, sizeof longest, "%.3f", stats_.longest_commit_ms);
  std::snprintf(total, sizeof total, "%.1f", stats_.commit_ms);
  log::Info("state database commits", {{"commits", std::to_string(stats_.commits)},
                                       {"writes", std::to_string(stats_.writes)},
                                       {"calls", std::to_string(stats_.calls)},
                                       {"longest_commit_ms", longest},
                                       {"commit_ms", total},
                                       {"failed", std::to_string(stats_.failed)}});
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_prepare_t*>(handle); });
  uv_close(reinterpret_cast<uv_handle_t*>(committed_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_async_t*>(handle); });
  uv_close(reinterpret_cast<uv_handle_t*>(heartbeat_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
}

void GroupCommit::OnHeartbeat(uv_timer_t* timer) {
  auto* self = static_cast<GroupCommit*>(timer->data);
  if (self->db_->last_commit().ok()) {
    uv_timer_stop(timer);
    return;
  }
  if (!self->submitted_.empty()) return;  // a commit is still running: its outcome will tell
  const int64_t written_ms = static_cast<int64_t>(self->now_ms_());
  self->Write([written_ms](sqlite3* db) -> Status {
    Statement write(db, "INSERT OR REPLACE INTO heartbeat (id, written_ms) VALUES (1, ?)");
    return write.Bind(1, written_ms).Run(db);
  });
}

uint64_t GroupCommit::Write(WriteStep write) {
  affinity_.Check("GroupCommit::Write");
  open_.writes.push_back(std::move(write));
  Arm();
  return open_.seq;
}

void GroupCommit::WriteAlone(WriteStep write, std::function<void(Status)> done) {
  affinity_.Check("GroupCommit::WriteAlone");
  SubmitOpenWrites();
  // Waiters of this turn without writes wait for the callers' commits, never for this one.
  std::vector<std::function<void(Status)>> waiting;
  waiting.swap(open_.waiters);
  open_.writes.push_back(std::move(write));
  open_.waiters.push_back(std::move(done));
  SubmitOpenWrites(/*alone=*/true);
  for (auto& waiter : waiting)
    WhenDurable(std::move(waiter));
}

void GroupCommit::WhenDurable(std::function<void(Status)> done) {
  affinity_.Check("GroupCommit::WhenDurable");
  if (open_.writes.empty()) {
    // The newest callers' batch still running, if any; a WriteAlone batch is nobody's business.
    for (auto batch = submitted_.rbegin(); batch != submitted_.rend(); ++batch) {
      if (batch->alone) continue;
      batch->waiters.push_back(std::move(done));
      return;
    }
  }
  open_.waiters.push_back(std::move(done));
  Arm();
}

uint64_t GroupCommit::AddBatchListener(std::function<void(uint64_t, bool)> listener) {
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void GroupCommit::RemoveBatchListener(uint64_t id) {
  std::erase_if(listeners_, [id](const auto& entry) { return entry.first == id; });
}

void GroupCommit::Arm() {
  if (armed_) return;
  armed_ = true;
  uv_prepare_start(prepare_, &GroupCommit::OnPrepare);
}

void GroupCommit::OnPrepare(uv_prepare_t* handle) {
  static_cast<GroupCommit*>(handle->data)->SubmitOpenBatch();
}

void GroupCommit::SubmitOpenBatch() {
  // Waiters that wait for nothing may write again; keep going until this turn's writes are out.
  while (open_.writes.empty() && !open_.waiters.empty()) {
    std::vector<std::function<void(Status)>> ready;
    ready.swap(open_.waiters);
    for (auto& done : ready)
      done(Status::Ok());
  }
  SubmitOpenWrites();
  if (armed_) {
    armed_ = false;
    uv_prepare_stop(prepare_);
  }
}

void GroupCommit::SubmitOpenWrites(bool alone) {
  if (open_.writes.empty()) return;
  open_.alone = alone;
  if (submitted_.empty()) uv_ref(reinterpret_cast<uv_handle_t*>(committed_));
  open_.submitted_ms = now_ms_();
  WriteBatch batch;
  batch.seq = open_.seq;
  batch.writes = std::move(open_.writes);
  thread_->Submit(std::move(batch));
  open_.writes.clear();
  submitted_.push_back(std::move(open_));
  open_ = Batch();
  open_.seq = submitted_.back().seq + 1;
  if (submitted_.size() == 1) PublishRunningSince();
}

void GroupCommit::OnCommitted(uv_async_t* handle) {
  static_cast<GroupCommit*>(handle->data)->TakeOutcomes();
}

void GroupCommit::TakeOutcomes() {
  std::vector<CommitOutcome> outcomes;
  {
    std::lock_guard<std::mutex> lock(outcomes_mutex_);
    outcomes.swap(outcomes_);
  }
  for (const CommitOutcome& outcome : outcomes)
    Finish(outcome);
  if (!outcomes.empty()) PublishRunningSince();
  if (submitted_.empty()) uv_unref(reinterpret_cast<uv_handle_t*>(committed_));
}

void GroupCommit::PublishRunningSince() {
  if (health_ == nullptr) return;
  health_->SetRunningSince(
      submitted_.empty() ? 0 : static_cast<int64_t>(submitted_.front().submitted_ms));
}

void GroupCommit::Finish(const CommitOutcome& outcome) {
  ++stats_.commits;
  stats_.writes += outcome.writes;
  stats_.longest_commit_ms = std::max(stats_.longest_commit_ms, outcome.seconds * 1e3);
  stats_.commit_ms += outcome.seconds * 1e3;
  Status committed = Status::Ok();
  if (!outcome.commit.ok()) {
    ++stats_.failed;
    committed = Unavailable("state database commit failed, nothing of this call was recorded: " +
                            outcome.commit.message());
    log::Error(committed.message(), {{"state_db", db_->path()}});
  }
  db_->NoteCommitResult(committed);
  if (health_ != nullptr) {
    if (committed.ok())
      health_->Committed();
    else
      health_->CommitFailed(db_->path() + ": " + outcome.commit.message());
  }
  if (!committed.ok() && !uv_is_active(reinterpret_cast<uv_handle_t*>(heartbeat_))) {
    uv_timer_start(heartbeat_, &GroupCommit::OnHeartbeat, heartbeat_period_ms_,
                   heartbeat_period_ms_);
  }
  for (uint64_t seq = outcome.first_seq; seq <= outcome.last_seq; ++seq) {
    Batch batch = std::move(submitted_.front());
    submitted_.pop_front();
    Status status = committed;
    for (const auto& [failed_seq, error] : outcome.failed_batches) {
      if (failed_seq != seq) continue;
      ++stats_.failed;
      status = Unavailable("state database write failed, nothing of this call was recorded: " +
                           error.message());
      log::Error(status.message(), {{"state_db", db_->path()}});
    }
    for (auto& [id, listener] : listeners_)
      listener(batch.seq, status.ok());
    stats_.calls += batch.waiters.size();
    for (auto& done : batch.waiters)
      done(status);
  }
}

void GroupCommit::RunWhenIdle(std::function<void(sqlite3*)> task) {
  affinity_.Check("GroupCommit::RunWhenIdle");
  thread_->RunWhenIdle(std::move(task));
}

void GroupCommit::Flush() {
  affinity_.Check("GroupCommit::Flush");
  FlushPending();
}

void GroupCommit::FlushPending() {
  while (!open_.writes.empty() || !open_.waiters.empty() || !submitted_.empty()) {
    SubmitOpenBatch();
    thread_->WaitIdle();
    TakeOutcomes();
  }
  thread_->WaitIdle();  // idle work queued by the callbacks above: done before handle() is read
}

Status GroupCommit::Health(uint64_t limit_ms) const {
  affinity_.Check("GroupCommit::Health");
  if (submitted_.empty()) return Status::Ok();
  const uint64_t running = now_ms_() - submitted_.front().submitted_ms;
  if (running <= limit_ms) return Status::Ok();
  return FailedPrecondition("state database " + db_->path() + ": a commit has been running for " +
                            std::to_string(running / 1000) +
                            " s (is the disk under it hung or full?)");
}

}  // namespace oxide::store
