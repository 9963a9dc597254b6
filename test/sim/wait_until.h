// Test support: WaitUntil for the sim tests, oxide::testing::WaitUntil (support/wait_until.h)
// as a gtest assertion that names what it waited for. gtest main thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

namespace sim_test {

// Checks `condition` until it holds; fails (with `what` in the message) once `limit` passes.
// The limit is a safety net against a hang, not a measured time.
::testing::AssertionResult WaitUntil(const std::function<bool()>& condition,
                                     std::chrono::milliseconds limit, const std::string& what);

}  // namespace sim_test
