// Every object whose address is handed to a gRPC completion queue as a tag implements this.
// Proceed() always runs on the loop thread (the CompletionPump moves tags there).
#pragma once

namespace oxide::rpc {

class CompletionTag {
 public:
  virtual ~CompletionTag() = default;
  // `ok` is gRPC's success bit for the operation this tag was attached to.
  virtual void Proceed(bool ok) = 0;
};

}  // namespace oxide::rpc
