// LUKS2 encryption of a volume's device under a passphrase the customer holds (cryptsetup):
// format a blank device, open it as /dev/mapper/<name>, find and close open mappings. The
// passphrase reaches cryptsetup only on a pipe (RunCommand's input), never on a command line, in
// a file or in a message. The settings luksFormat uses, and why, are in docs/encryption.md.
// Every function blocks (cryptsetup, a KDF of about two seconds per format or open): call off the
// loop thread; safe from several worker threads at once for different names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node/command_runner.h"
#include "node/device_finder.h"
#include "util/status.h"

namespace oxide::node {

// Names of the mappings this plugin opens: kMapperPrefix + the volume's NVMe serial.
inline constexpr const char* kMapperPrefix = "oxide-csi-";
std::string MapperName(const std::string& serial);
bool IsPluginMapperName(const std::string& name);

// The longest passphrase accepted (cryptsetup's own limit for a key read from a pipe is 8 MiB;
// a passphrase is typed or generated, a few hundred bytes at most).
inline constexpr size_t kMaxPassphraseBytes = 4096;
// OK, or INVALID_ARGUMENT naming `secret_key` (never the value) when it is empty or too long.
Status CheckPassphrase(const std::string& passphrase, const std::string& secret_key);

// luksFormat --type luks2 --pbkdf argon2id ... of `device`, which the caller has verified blank.
Status LuksFormat(const BlockDevice& device, const std::string& passphrase,
                  const CommandLimits& limits);

// Opens the LUKS volume on `device` as /dev/mapper/`name`. FAILED_PRECONDITION "the passphrase
// does not open this volume" when no key slot takes the passphrase.
StatusOr<BlockDevice> LuksOpen(const BlockDevice& device, const std::string& name,
                               const std::string& passphrase, const CommandLimits& limits);

struct LuksMapping {
  BlockDevice mapper;        // /dev/mapper/<name> and its device number
  std::string backing_node;  // the device under it, as cryptsetup status names it
  // The device number of backing_node; unset when it no longer exists (the disk went away).
  std::optional<std::string> backing_number;
};

// The open mapping `name`, or nullopt when there is none.
StatusOr<std::optional<LuksMapping>> FindLuksMapping(const std::string& name,
                                                     const CommandLimits& limits);

// Closes the mapping `name`; OK when it is not open. FAILED_PRECONDITION when it is in use.
Status LuksClose(const std::string& name, const CommandLimits& limits);

// The names of this plugin's open mappings (/dev/mapper/oxide-csi-*).
std::vector<std::string> ListPluginMappings();

}  // namespace oxide::node
