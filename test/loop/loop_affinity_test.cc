// LoopAffinity: a loop-only object used off the thread of its first use aborts in the checked
// builds (Debug, ASan, TSan); on that thread the check passes.
#include "loop/loop_affinity.h"

#include <gtest/gtest.h>

#include <thread>

namespace oxide {
namespace {

TEST(LoopAffinity, AnObjectMadeOnOneThreadMayBeUsedOnAnother) {
  LoopAffinity affinity;  // made here, used only by the thread below: allowed
  std::thread([&] {
    affinity.Check("VolumeEngine::Create");
    affinity.Check("VolumeEngine::Delete");
  }).join();
  SUCCEED();
}

TEST(LoopAffinityDeathTest, ACallFromAnotherThreadAbortsNamingTheCall) {
  if (!LoopAffinity::kEnabled) GTEST_SKIP() << "loop checks are compiled out of this build";
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  LoopAffinity affinity;
  affinity.Check("VolumeEngine::Create");  // this thread is now its loop thread
  EXPECT_DEATH(std::thread([&] { affinity.Check("VolumeEngine::Create"); }).join(),
               "VolumeEngine::Create called off its loop thread");
}

}  // namespace
}  // namespace oxide
