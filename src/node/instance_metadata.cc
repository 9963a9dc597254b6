#include "node/instance_metadata.h"

#include <cctype>
#include <sstream>

#include "config/settings.h"
#include "config/validation.h"

namespace oxide::node {

StatusOr<std::string> ParseInstanceMetadata(const std::string& text, const std::string& file) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
      value.pop_back();
    }
    if (key == "OXIDE_INSTANCE_ID" || key == "instance_id") {
      if (!IsUuid(value))
        return InvalidSetting("instance-metadata-file", file + ": " + key + " is not a UUID");
      return ToLower(value);
    }
  }
  return InvalidSetting("instance-metadata-file", file + " has no OXIDE_INSTANCE_ID=<uuid> line");
}

}  // namespace oxide::node
