#include "wait_until.h"

#include <thread>

namespace sim_test {

::testing::AssertionResult WaitUntil(const std::function<bool()>& condition,
                                     std::chrono::milliseconds limit, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    if (condition()) return ::testing::AssertionSuccess();
    if (std::chrono::steady_clock::now() >= deadline) {
      return ::testing::AssertionFailure()
             << "gave up after " << limit.count() << " ms waiting for: " << what;
    }
    // No event can be awaited: the condition is state inside a separate oxide-sim process,
    // which has no channel to notify this test, so we re-check after a short pause.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace sim_test
