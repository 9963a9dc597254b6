// Replays a fuzz target over corpus files and folders: every file is one input, passed to
// LLVMFuzzerTestOneInput as libFuzzer would. A crash, a sanitizer report or an uncaught
// exception fails the run; so does an empty corpus (a replay over nothing proves nothing).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace {

void Replay(const std::filesystem::path& file, size_t* count) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ++*count;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) Replay(entry.path(), &count);
      }
    } else if (std::filesystem::is_regular_file(path)) {
      Replay(path, &count);
    } else {
      std::fprintf(stderr, "%s: no such corpus file or folder\n", argv[i]);
      return 2;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return count == 0 ? 2 : 0;
}
