// What a test makes of where it runs: whether it is CI (CI=true, where every suite must run, so a
// missing precondition fails instead of skipping), and the sanitizer reports a child process of
// the test printed. Any thread.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace oxide::testing {

// True when the environment says CI=true (what CI sets; also `CI=true scripts/test.sh`).
bool InCi();

// Fails the current test (non-fatally) when `output` holds an AddressSanitizer, LeakSanitizer,
// UndefinedBehaviorSanitizer or ThreadSanitizer report; `what` names the program.
void ExpectNoSanitizerReport(const std::string& output, const std::string& what);

}  // namespace oxide::testing

// Skips the test when this machine cannot run it (no root, no loop devices, no cgroup...), with
// one line saying what was not tested; under CI=true the same precondition fails the test, so a
// CI run never reports a suite as passed that it did not run. Use in a test body or SetUp().
#define OXIDE_SKIP_UNLESS_CI(reason)                                        \
  do {                                                                      \
    if (::oxide::testing::InCi())                                           \
      GTEST_FAIL() << "CI=true, and this test cannot run here: " << reason; \
    GTEST_SKIP() << reason;                                                 \
  } while (false)
