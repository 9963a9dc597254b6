#include "cli/verb_spec.h"

#include <utility>

namespace oxide::cli {

std::string VerbSpec::Title() const {
  return group.empty() ? "oxide-csi-ctl" : group + " " + verb;
}

const FlagSpec* VerbSpec::FindFlag(const std::string& name) const {
  for (const FlagSpec& flag : flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

FlagSpec StringFlag(std::string name, std::string value_name, std::string help, std::string field) {
  FlagSpec flag;
  flag.name = std::move(name);
  flag.value_name = std::move(value_name);
  flag.help = std::move(help);
  flag.field = std::move(field);
  return flag;
}

FlagSpec RequiredFlag(std::string name, std::string value_name, std::string help,
                      std::string field) {
  FlagSpec flag =
      StringFlag(std::move(name), std::move(value_name), std::move(help), std::move(field));
  flag.required = true;
  return flag;
}

FlagSpec BoolFlag(std::string name, std::string help, std::string field) {
  FlagSpec flag;
  flag.name = std::move(name);
  flag.kind = FlagKind::kBool;
  flag.help = std::move(help);
  flag.field = std::move(field);
  return flag;
}

FlagSpec NumberFlag(std::string name, std::string value_name, uint64_t min, uint64_t max,
                    std::string unit, std::string help, std::string field) {
  FlagSpec flag =
      StringFlag(std::move(name), std::move(value_name), std::move(help), std::move(field));
  flag.kind = FlagKind::kWholeNumber;
  flag.min = min;
  flag.max = max;
  flag.unit = std::move(unit);
  return flag;
}

FlagSpec KeyValueFlag(std::string name, std::string help, std::string field) {
  FlagSpec flag = StringFlag(std::move(name), "KEY=VALUE", std::move(help), std::move(field));
  flag.kind = FlagKind::kKeyValue;
  flag.repeated = true;
  return flag;
}

}  // namespace oxide::cli
