#include "util/setting_file.h"

#include <fstream>

namespace oxide {

std::optional<std::string> ReadSettingFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kLargestSettingFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::string SettingFileTooLarge(const std::string& what) {
  return what + " is larger than " + std::to_string(kLargestSettingFile / 1024) + " KiB";
}

}  // namespace oxide
