#include "wait_until.h"

#include "support/wait_until.h"

namespace sim_test {

::testing::AssertionResult WaitUntil(const std::function<bool()>& condition,
                                     std::chrono::milliseconds limit, const std::string& what) {
  if (oxide::testing::WaitUntil(condition, limit)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "gave up after " << limit.count() << " ms waiting for: " << what;
}

}  // namespace sim_test
