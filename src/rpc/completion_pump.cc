#include "rpc/completion_pump.h"

namespace oxide::rpc {

CompletionPump::CompletionPump(EventLoop* loop, grpc::CompletionQueue* cq,
                               std::function<void()> on_drained)
    : cq_(cq), on_drained_(std::move(on_drained)), wakeup_(new uv_async_t) {
  uv_async_init(loop->uv(), wakeup_, &CompletionPump::OnWakeup);
  wakeup_->data = this;
  thread_ = std::thread([this] { PumpThread(); });
}

CompletionPump::~CompletionPump() {
  if (thread_.joinable()) thread_.join();
  wakeup_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(wakeup_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_async_t*>(handle); });
}

void CompletionPump::PumpThread() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) {
    {
      std::lock_guard lock(mutex_);
      pending_.emplace_back(static_cast<CompletionTag*>(tag), ok);
    }
    uv_async_send(wakeup_);
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

void CompletionPump::RunPending() {
  std::vector<std::pair<CompletionTag*, bool>> batch;
  bool drained = false;
  {
    std::lock_guard lock(mutex_);
    batch.swap(pending_);
    drained = drained_;
  }
  for (auto [tag, ok] : batch)
    tag->Proceed(ok);
  if (drained && on_drained_) {
    auto done = std::move(on_drained_);
    on_drained_ = nullptr;
    done();
  }
}

}  // namespace oxide::rpc
