// The declarations of oxide-csi-ctl's verbs and global flags: positional arguments and flags (name,
// kind, range, required, help, and the CSI protocol field each one fills). The argument parser,
// the help text and the field -> flag mapping of error messages are all generated from these, so
// they cannot drift apart. Plain data; single-threaded CLI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oxide::cli {

enum class FlagKind {
  kString,       // --name value
  kWholeNumber,  // --name N: digits only, within [min, max]
  kBool,         // --name (takes no value)
  kKeyValue,     // --name key=value
};

struct FlagSpec {
  std::string name{};  // without the leading "--"
  FlagKind kind = FlagKind::kString;
  std::string value_name{};  // shown in help, e.g. "N", "PATH"
  std::string help{};
  bool required = false;
  bool repeated = false;  // may be given more than once (every value kept)
  // kWholeNumber only: the accepted range and the unit named in messages ("GiB").
  uint64_t min = 0;
  uint64_t max = 0;
  std::string unit{};
  // kString only: when not empty, the only accepted values.
  std::vector<std::string> choices{};
  // The CSI request field this flag fills ("staging_target_path"), for error messages.
  std::string field{};
  // Flags that may not be given together with this one (e.g. --from-snapshot, --from-volume).
  std::vector<std::string> conflicts_with{};
};

struct PositionalSpec {
  std::string name{};  // shown as <name>
  bool optional = false;
  std::string field{};  // the CSI request field it fills
};

struct VerbSpec {
  std::string group{};  // "identity", "controller", "node", "snapshot"; empty for global flags
  std::string verb{};
  std::string help{};
  std::vector<PositionalSpec> positionals{};
  std::vector<FlagSpec> flags{};

  // "controller create" (or "oxide-csi-ctl" for the global flags).
  std::string Title() const;
  const FlagSpec* FindFlag(const std::string& name) const;
};

// Convenience builders for the declarations.
FlagSpec StringFlag(std::string name, std::string value_name, std::string help,
                    std::string field = "");
FlagSpec RequiredFlag(std::string name, std::string value_name, std::string help,
                      std::string field);
FlagSpec BoolFlag(std::string name, std::string help, std::string field = "");
FlagSpec NumberFlag(std::string name, std::string value_name, uint64_t min, uint64_t max,
                    std::string unit, std::string help, std::string field = "");
FlagSpec KeyValueFlag(std::string name, std::string help, std::string field);

}  // namespace oxide::cli
