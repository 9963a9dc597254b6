// Bounded reading of the small files settings name (the Oxide token file, the instance metadata
// file): a file far larger than such a file (or endless, such as /dev/zero) is not one, and
// reading it whole would take the memory with it. Blocking file I/O: the callers read at start
// on the main thread or on a worker thread; the settings parser itself never reads a file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace oxide {

// A token is well under 1 KiB, an instance metadata file a few lines.
inline constexpr size_t kLargestSettingFile = 64 * 1024;

// The file's text; nullopt when it cannot be opened; more than kLargestSettingFile bytes when it
// is larger than that (the caller refuses it).
std::optional<std::string> ReadSettingFile(const std::string& path);

// "<what> is larger than 64 KiB".
std::string SettingFileTooLarge(const std::string& what);

}  // namespace oxide
