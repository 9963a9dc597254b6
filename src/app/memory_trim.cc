#include "app/memory_trim.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>

namespace oxide {

size_t ResidentBytes() {
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int read = std::fscanf(statm, "%lu %lu", &size, &resident);
  std::fclose(statm);
  return read == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

MemoryTrim::MemoryTrim(uv_loop_t* loop, std::chrono::milliseconds period, size_t slack)
    : loop_(loop), period_(period), slack_(slack) {
  timer_.data = this;
  work_.data = this;
}

void MemoryTrim::Start() {
  uv_timer_init(loop_, &timer_);
  started_ = true;
  baseline_ = ResidentBytes();
  const auto ms = static_cast<uint64_t>(period_.count());
  uv_timer_start(&timer_, OnTimer, ms, ms);
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));  // never what keeps the loop running
}

void MemoryTrim::Stop() {
  if (started_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  }
}

bool MemoryTrim::CheckAndTrim() {
  const size_t now = ResidentBytes();
  if (baseline_.load() == 0) {  // the first measure is the baseline
    baseline_ = now;
    return false;
  }
  if (now == 0 || now <= baseline_.load() + slack_) {
    if (now != 0 && now < baseline_.load()) baseline_ = now;
    return false;
  }
  malloc_trim(0);
  baseline_ = ResidentBytes();
  ++trims_;
  return true;
}

void MemoryTrim::OnTimer(uv_timer_t* timer) {
  auto* self = static_cast<MemoryTrim*>(timer->data);
  if (self->work_queued_) return;
  self->work_queued_ = true;
  uv_queue_work(
      self->loop_, &self->work_,
      [](uv_work_t* work) { static_cast<MemoryTrim*>(work->data)->CheckAndTrim(); },
      [](uv_work_t* work, int) { static_cast<MemoryTrim*>(work->data)->work_queued_ = false; });
}

}  // namespace oxide
