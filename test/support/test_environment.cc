#include "support/test_environment.h"

#include <cstdlib>
#include <cstring>

namespace oxide::testing {

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

void ExpectNoSanitizerReport(const std::string& output, const std::string& what) {
  for (const char* marker : {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer",
                             "ERROR: LeakSanitizer", "runtime error:"}) {
    EXPECT_EQ(output.find(marker), std::string::npos) << what << " reported:\n" << output;
  }
}

}  // namespace oxide::testing
