#include "backend/token_file.h"

#include <cctype>
#include <optional>

#include "util/setting_file.h"

namespace oxide::backend {

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::optional<std::string> text = ReadSettingFile(path);
  if (!text) return InvalidArgument("cannot read the Oxide token file " + path);
  if (text->size() > kLargestSettingFile) {
    return InvalidArgument(SettingFileTooLarge("the Oxide token file " + path) +
                           "; it should hold only the token");
  }
  std::string token = std::move(*text);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
    token.pop_back();
  if (token.empty()) return InvalidArgument("the Oxide token file " + path + " is empty");
  return token;
}

}  // namespace oxide::backend
