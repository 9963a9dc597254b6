// RunBlocking: runs blocking work (mkfs, mount, sysfs reads) on a libuv worker thread and hands
// its result back to the loop thread. Call from the loop thread; `work` runs on a worker thread
// and must touch nothing the loop owns; `done` runs on the loop thread.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "util/status.h"

namespace oxide::engine {

// `work()` returns a Status or a StatusOr<T> (the Result); `done(Result)` gets it. When the work
// is cancelled (loop closing) or cannot be queued, `done` gets an error Status instead. Both
// callables may be move-only (a Reply is).
template <typename Work, typename Done>
void RunBlocking(uv_loop_t* loop, Work work, Done done) {
  using Result = std::invoke_result_t<Work&>;
  struct Job {
    uv_work_t request{};
    Work work;
    Done done;
    std::optional<Result> result;
  };
  auto* job = new Job{{}, std::move(work), std::move(done), std::nullopt};
  job->request.data = job;
  int rc = uv_queue_work(
      loop, &job->request,
      [](uv_work_t* request) {
        auto* self = static_cast<Job*>(request->data);
        self->result.emplace(self->work());
      },
      [](uv_work_t* request, int) {
        std::unique_ptr<Job> self(static_cast<Job*>(request->data));
        if (self->result) {
          self->done(std::move(*self->result));
        } else {
          self->done(Result(Unavailable("the plugin is shutting down; retry the call")));
        }
      });
  if (rc != 0) {
    std::unique_ptr<Job> self(job);
    self->done(Result(Internal(std::string("cannot queue work: ") + uv_strerror(rc))));
  }
}

}  // namespace oxide::engine
