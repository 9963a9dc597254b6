// LoopAffinity: the check that a loop-only object is used on its loop thread. An object belongs to
// the thread of its first checked call (objects may be made on another thread before the loop
// starts, as the benchmarks do); a checked call from any other thread later is a bug. With
// OXIDE_CSI_LOOP_CHECKS (Debug, ASan and TSan builds) it aborts with the call's name; in other
// builds the check compiles to nothing. Any thread may call Check().
#pragma once

#include <atomic>
#include <thread>

namespace oxide {

class LoopAffinity {
 public:
  // Aborts, naming `what`, when called off the thread of the first checked call.
  void Check([[maybe_unused]] const char* what) const {
#ifdef OXIDE_CSI_LOOP_CHECKS
    std::thread::id owner{};
    const std::thread::id self = std::this_thread::get_id();
    if (!owner_.compare_exchange_strong(owner, self) && owner != self) Violated(what);
#endif
  }

  static constexpr bool kEnabled =
#ifdef OXIDE_CSI_LOOP_CHECKS
      true;
#else
      false;
#endif

 private:
  [[noreturn]] static void Violated(const char* what);

  mutable std::atomic<std::thread::id> owner_{};
};

}  // namespace oxide
