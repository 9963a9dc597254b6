#include "store/group_commit.h"

#include <utility>

#include "util/log.h"

namespace oxide::store {

GroupCommit::GroupCommit(uv_loop_t* loop, StateDb* db, std::chrono::milliseconds window)
    : db_(db),
      window_(window),
      prepare_(new uv_prepare_t),
      window_timer_(new uv_timer_t),
      loop_(loop),
      begin_(db->handle(), "BEGIN IMMEDIATE"),
      commit_(db->handle(), "COMMIT") {
  uv_prepare_init(loop, prepare_);
  prepare_->data = this;
  uv_timer_init(loop, window_timer_);
  window_timer_->data = this;
}

GroupCommit::~GroupCommit() {
  Flush();
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_prepare_t*>(handle); });
  uv_close(reinterpret_cast<uv_handle_t*>(window_timer_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
}

Status GroupCommit::BeginWrite() {
  if (!in_transaction_) {
    Status begun = begin_.Run(db_->handle());
    if (!begun.ok()) return Internal("state database: cannot begin a write: " + begun.message());
    in_transaction_ = true;
    const auto window =
        static_cast<uint64_t>(window_.count()) * (last_commit_waiters_ >= kBusyWaiters ? 2 : 1);
    if (window > 0 && committed_once_) {
      uv_update_time(loop_);  // the loop's clock may be a long callback old
      const uint64_t since = uv_now(loop_) - last_commit_ms_;
      if (since < window) {  // busy: wait for the rest of the window, gathering more writes
        window_open_ = true;
        uv_timer_start(window_timer_, &GroupCommit::OnWindowEnd, window - since, 0);
      }
    }
  }
  Arm();
  return Status::Ok();
}

void GroupCommit::OnWindowEnd(uv_timer_t* handle) {
  auto* self = static_cast<GroupCommit*>(handle->data);
  self->window_open_ = false;
  self->CommitPending(false);
}

void GroupCommit::WhenDurable(std::function<void(Status)> done) {
  waiting_.push_back(std::move(done));
  Arm();
}

void GroupCommit::Arm() {
  if (armed_) return;
  armed_ = true;
  uv_prepare_start(prepare_, &GroupCommit::OnPrepare);
}

void GroupCommit::OnPrepare(uv_prepare_t* handle) {
  auto* self = static_cast<GroupCommit*>(handle->data);
  // While the window is open, the transaction (and whoever waits for it) waits for its timer.
  if (self->window_open_ && self->in_transaction_) return;
  self->CommitPending(false);
}

void GroupCommit::Flush() {
  CommitPending(true);
}

void GroupCommit::CommitPending(bool force) {
  // Callbacks may write again (an operation's next step); keep going until nothing is pending so
  // the loop never sleeps on uncommitted writes — unless those writes opened a window, whose
  // timer commits them (`force`: not even then).
  while (in_transaction_ || !waiting_.empty()) {
    if (window_open_) {
      if (!force && in_transaction_) return;  // the timer commits; the prepare handle stays on
      window_open_ = false;
      uv_timer_stop(window_timer_);
    }
    Status committed = Status::Ok();
    const bool committed_now = in_transaction_;
    if (in_transaction_) {
      in_transaction_ = false;
      committed = commit_.Run(db_->handle());
      if (!committed.ok()) {
        (void)Exec(db_->handle(), "ROLLBACK");
        committed =
            Unavailable("state database commit failed, nothing of this call was recorded: " +
                        committed.message());
        log::Error(committed.message(), {{"state_db", db_->path()}});
      }
      ++commits_;
      db_->NoteCommitResult(committed);
      uv_update_time(loop_);
      last_commit_ms_ = uv_now(loop_);
      committed_once_ = true;
    }
    std::vector<std::function<void(Status)>> ready;
    ready.swap(waiting_);
    if (committed_now) last_commit_waiters_ = ready.size();
    for (auto& done : ready)
      done(committed);
  }
  if (window_open_) {  // nothing left to commit
    window_open_ = false;
    uv_timer_stop(window_timer_);
  }
  if (armed_) {
    armed_ = false;
    uv_prepare_stop(prepare_);
  }
}

}  // namespace oxide::store
