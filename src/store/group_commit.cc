#include "store/group_commit.h"

#include <utility>

#include "util/log.h"

namespace oxide::store {

GroupCommit::GroupCommit(uv_loop_t* loop, StateDb* db, std::chrono::milliseconds window)
    : db_(db), window_(window), prepare_(new uv_prepare_t), window_timer_(new uv_timer_t) {
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
    Status begun = Exec(db_->handle(), "BEGIN IMMEDIATE");
    if (!begun.ok()) return Internal("state database: cannot begin a write: " + begun.message());
    in_transaction_ = true;
    if (window_.count() > 0) {
      window_open_ = true;
      uv_update_time(window_timer_->loop);  // the loop's clock may be a long callback old
      uv_timer_start(window_timer_, &GroupCommit::OnWindowEnd,
                     static_cast<uint64_t>(window_.count()), 0);
    }
  }
  Arm();
  return Status::Ok();
}

void GroupCommit::OnWindowEnd(uv_timer_t* handle) {
  auto* self = static_cast<GroupCommit*>(handle->data);
  self->window_open_ = false;
  self->Flush();
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
  self->Flush();
}

void GroupCommit::Flush() {
  if (window_open_) {
    window_open_ = false;
    uv_timer_stop(window_timer_);
  }
  // Callbacks may write again (an operation's next step); keep going until nothing is pending so
  // the loop never sleeps on uncommitted writes.
  while (in_transaction_ || !waiting_.empty()) {
    Status committed = Status::Ok();
    if (in_transaction_) {
      in_transaction_ = false;
      committed = Exec(db_->handle(), "COMMIT");
      if (!committed.ok()) {
        (void)Exec(db_->handle(), "ROLLBACK");
        committed =
            Unavailable("state database commit failed, nothing of this call was recorded: " +
                        committed.message());
        log::Error(committed.message(), {{"state_db", db_->path()}});
      }
      ++commits_;
      db_->NoteCommitResult(committed);
    }
    std::vector<std::function<void(Status)>> ready;
    ready.swap(waiting_);
    for (auto& done : ready)
      done(committed);
  }
  if (armed_) {
    armed_ = false;
    uv_prepare_stop(prepare_);
  }
}

}  // namespace oxide::store
