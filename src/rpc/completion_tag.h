// Every object whose address is handed to a gRPC completion queue as a tag implements this.
// Proceed() always runs on the loop thread (the CompletionPump moves tags there). A tag handed
// to gRPC as Deferrable(tag) marks bookkeeping that may wait a little for the loop's next wakeup
// instead of waking it (nobody outside the plugin waits for it); the mark is the pointer's low
// bit, so the pump's thread never touches the object.
#pragma once

#include <cstdint>

namespace oxide::rpc {

class CompletionTag {
 public:
  virtual ~CompletionTag() = default;
  // `ok` is gRPC's success bit for the operation this tag was attached to.
  virtual void Proceed(bool ok) = 0;
};

inline void* Deferrable(CompletionTag* tag) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(tag) | 1u);
}

// The tag a queue returned, and whether it was marked Deferrable.
inline CompletionTag* UntagCompletion(void* tag, bool* deferrable) {
  const auto bits = reinterpret_cast<uintptr_t>(tag);
  *deferrable = (bits & 1u) != 0;
  return reinterpret_cast<CompletionTag*>(bits & ~uintptr_t{1});
}

}  // namespace oxide::rpc
