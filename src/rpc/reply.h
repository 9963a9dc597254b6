// Reply<Response>: the handle a handler uses to answer one call, now or later, exactly once.
// Move-only; loop thread only. A Reply destroyed unanswered fails the call with INTERNAL, so no
// call can hang because a handler lost track of it.
#pragma once

#include <memory>
#include <utility>

#include "util/status.h"

namespace oxide::rpc {

template <typename Response>
class ReplySink {
 public:
  virtual void Answer(Response response, const Status& status) = 0;

 protected:
  ~ReplySink() = default;
};

template <typename Response>
class Reply {
 public:
  explicit Reply(ReplySink<Response>* sink) : sink_(sink) {}
  Reply(Reply&& other) noexcept : sink_(std::exchange(other.sink_, nullptr)) {}
  Reply& operator=(Reply&& other) noexcept {
    if (this != &other) {
      Abandon();
      sink_ = std::exchange(other.sink_, nullptr);
    }
    return *this;
  }
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply() { Abandon(); }

  void Ok(Response response) {
    if (auto* sink = std::exchange(sink_, nullptr)) sink->Answer(std::move(response), Status::Ok());
  }
  void Fail(const Status& status) {
    if (auto* sink = std::exchange(sink_, nullptr)) sink->Answer(Response(), status);
  }
  bool answered() const { return sink_ == nullptr; }

 private:
  void Abandon() {
    if (sink_ != nullptr) Fail(Internal("the plugin dropped this call without an answer"));
  }
  ReplySink<Response>* sink_;
};

// A Reply that several callbacks may hold; the first to answer wins.
template <typename Response>
std::shared_ptr<Reply<Response>> Share(Reply<Response> reply) {
  return std::make_shared<Reply<Response>>(std::move(reply));
}

}  // namespace oxide::rpc
