#include "rpc/completion_pump.h"

#include <pthread.h>
#include <sched.h>

namespace oxide::rpc {

CompletionPump::CompletionPump(EventLoop* loop, grpc::CompletionQueue* cq,
                               std::function<void()> on_drained, std::chrono::microseconds spin)
    : cq_(cq),
      spin_(spin),
      on_drained_(std::move(on_drained)),
      wakeup_(new uv_async_t),
      check_(new uv_check_t) {
  uv_async_init(loop->uv(), wakeup_, &CompletionPump::OnWakeup);
  wakeup_->data = this;
  uv_check_init(loop->uv(), check_);
  check_->data = this;
  uv_check_start(check_, &CompletionPump::OnCheck);
  uv_unref(reinterpret_cast<uv_handle_t*>(check_));  // the async handle keeps the loop alive
  thread_ = std::thread([this] { PumpThread(); });
  // Named and scheduled here, before the server serves, rather than by the thread itself later.
  pthread_setname_np(thread_.native_handle(), kThreadName);
  // SCHED_BATCH: a woken batch thread never preempts the running one. gRPC wakes this thread
  // for every answer the loop sends (its completion is queued here), and without this it
  // preempted the loop thread about once per RPC under load (`perf sched`: 771 of the loop's
  // 1,353 preemptions in 3 s); now it runs when the loop waits or on the other CPU. Its work is
  // handing tags over, which a few hundred microseconds do not hurt. Needs no privilege.
  sched_param normal_priority{};
  pthread_setschedparam(thread_.native_handle(), SCHED_BATCH, &normal_priority);
}

CompletionPump::~CompletionPump() {
  if (thread_.joinable()) thread_.join();
  wakeup_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(wakeup_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_async_t*>(handle); });
  check_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(check_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_check_t*>(handle); });
}

void CompletionPump::PumpThread() {
  void* tag = nullptr;
  bool ok = false;
  bool deferred = false;  // deferrable tags were queued without waking the loop
  gpr_timespec wake_by = gpr_inf_future(GPR_CLOCK_MONOTONIC);
  while (true) {
    auto next = cq_->AsyncNext(&tag, &ok, deferred ? wake_by : gpr_inf_future(GPR_CLOCK_MONOTONIC));
    if (next == grpc::CompletionQueue::SHUTDOWN) break;
    if (next == grpc::CompletionQueue::TIMEOUT) {
      // The loop did not wake meanwhile (else it ran them and cleared the hint): wake it now.
      if (has_pending_.load(std::memory_order_acquire)) uv_async_send(wakeup_);
      deferred = false;
      continue;
    }
    bool defer = false;
    CompletionTag* completion = UntagCompletion(tag, &defer);
    {
      std::lock_guard lock(mutex_);
      pending_.emplace_back(completion, ok);
    }
    has_pending_.store(true, std::memory_order_release);
    if (!defer) {
      has_urgent_.store(true, std::memory_order_release);
      uv_async_send(wakeup_);
      deferred = false;
    } else if (!deferred) {
      deferred = true;
      wake_by = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                             gpr_time_from_millis(kDeferMax.count(), GPR_TIMESPAN));
    }
  }
  {
    std::lock_guard lock(mutex_);
    drained_ = true;
  }
  uv_async_send(wakeup_);
}

void CompletionPump::OnWakeup(uv_async_t* handle) {
  if (handle->data != nullptr) static_cast<CompletionPump*>(handle->data)->RunPending();
}

void CompletionPump::OnCheck(uv_check_t* handle) {
  auto* self = static_cast<CompletionPump*>(handle->data);
  if (self != nullptr && self->has_pending_.load(std::memory_order_acquire)) self->RunBatch();
}

void CompletionPump::RunPending() {
  size_t ran = RunBatch();
  // Spin only at light load: a large batch means tags arrive faster than one wakeup costs, and
  // there the CPU is better left to the threads producing them.
  if (ran == 0 || ran > kSpinMaxBatch || spin_.count() == 0) return;
  if (wakeups_without_spin_ > 0) {  // recent spins caught nothing: not worth it for a while
    --wakeups_without_spin_;
    return;
  }
  bool caught = false;
  auto deadline = std::chrono::steady_clock::now() + spin_;
  while (std::chrono::steady_clock::now() < deadline) {
    // Only a tag that would wake the loop counts; deferrable ones run after this callback.
    if (has_urgent_.load(std::memory_order_acquire)) {
      caught = true;
      ran = RunBatch();
      if (ran == 0 || ran > kSpinMaxBatch) break;
      deadline = std::chrono::steady_clock::now() + spin_;
    } else {
      // Gives the CPU to any runnable thread (the pump, gRPC's, the CO's) instead of taking it
      // from them.
      sched_yield();
    }
  }
  if (caught) {
    missed_spins_ = 0;
  } else if (++missed_spins_ >= kMissesBeforePause) {
    missed_spins_ = 0;
    wakeups_without_spin_ = kWakeupsWithoutSpin;
  }
}

size_t CompletionPump::RunBatch() {
  std::vector<std::pair<CompletionTag*, bool>> batch;
  bool drained = false;
  {
    std::lock_guard lock(mutex_);
    batch.swap(pending_);
    drained = drained_;
    has_pending_.store(false, std::memory_order_relaxed);
    has_urgent_.store(false, std::memory_order_relaxed);
  }
  for (auto [tag, ok] : batch)
    tag->Proceed(ok);
  if (drained) {
    if (on_drained_) {
      auto done = std::move(on_drained_);
      on_drained_ = nullptr;
      done();
    }
    return 0;
  }
  return batch.size();
}

}  // namespace oxide::rpc
