// MemoryTrim gives freed heap pages back: after 63/64 of 64 MiB of small blocks are freed (the
// rest kept, so the heap cannot simply shrink from its top), a check trims and the RSS falls; a
// second check with nothing new to give back does not trim.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "app/loop_services.h"

namespace oxide {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerOwnsTheHeap = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerOwnsTheHeap = true;
#else
constexpr bool kSanitizerOwnsTheHeap = false;
#endif
#else
constexpr bool kSanitizerOwnsTheHeap = false;
#endif

TEST(MemoryTrim, FreedPagesGoBackToTheKernelOnlyWhenTheRssGrew) {
  if (kSanitizerOwnsTheHeap) {
    GTEST_SKIP() << "ASan and TSan replace malloc (freed blocks sit in their quarantine), so "
                    "glibc's malloc_trim has nothing to give back; the normal build runs this";
  }
  MemoryTrim trim(nullptr, std::chrono::seconds(5), 4 << 20);  // never started: no timer
  EXPECT_FALSE(trim.CheckAndTrim());                           // the first measure is the baseline
  std::vector<void*> blocks;
  for (int i = 0; i < 16384; ++i) {
    void* block = std::malloc(4000);
    std::memset(block, 1, 4000);
    blocks.push_back(block);
  }
  // Every 64th block stays: the heap cannot shrink from its top, and ~250 KB runs between the
  // kept blocks are free but still resident.
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % 64 != 63) std::free(blocks[i]);
  }
  const size_t before = ResidentBytes();
  ASSERT_TRUE(trim.CheckAndTrim()) << before;
  const size_t after = ResidentBytes();
  EXPECT_LT(after + (32u << 20), before) << "before " << before << ", after " << after;
  EXPECT_FALSE(trim.CheckAndTrim()) << "nothing grew since";
  EXPECT_EQ(trim.trims(), 1u);
  for (size_t i = 63; i < blocks.size(); i += 64)
    std::free(blocks[i]);
}

}  // namespace
}  // namespace oxide
