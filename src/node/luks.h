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

// luksFormat --type luks2 --pbkdf argon2id ... of `device`, which the caller has verified blank,
// with the device's own logical sector size (so mkfs sees the sector the disk has).
Status LuksFormat(const BlockDevice& device, const std::string& passphrase,
                  const CommandLimits& limits);

// What a LUKS header on `device` holds that decides whether it may be opened: its key slots, and
// the most memory any slot's key derivation asks for (argon2: a header made elsewhere may ask for
// gigabytes, more than the node plugin's memory limit).
struct LuksHeader {
  int keyslots = -1;  // -1: not known (a LUKS1 header)
  int64_t max_kdf_memory_kib = 0;
};
StatusOr<LuksHeader> ReadLuksHeader(const BlockDevice& device, const CommandLimits& limits);

// The most memory a key slot's derivation may ask for before an open is refused.
inline constexpr int64_t kMaxKdfMemoryKib = 256 * 1024;

// Opens the LUKS volume on `device` as /dev/mapper/`name`. FAILED_PRECONDITION "the passphrase
// does not open this volume" when no key slot takes the passphrase.
StatusOr<BlockDevice> LuksOpen(const BlockDevice& device, const std::string& name,
                               const std::string& passphrase, const CommandLimits& limits);

// OK when `passphrase` opens a key slot of the LUKS volume on `device` (nothing is mapped);
// FAILED_PRECONDITION "the passphrase does not open this volume" otherwise.
Status LuksTestPassphrase(const BlockDevice& device, const std::string& passphrase,
                          const CommandLimits& limits);

struct LuksMapping {
  BlockDevice mapper;        // /dev/mapper/<name> and its device number
  std::string backing_node;  // the device under it, as cryptsetup status names it
  // The device number of backing_node; unset when it no longer exists (the disk went away).
  std::optional<std::string> backing_number;
};

// The open mapping `name`, or nullopt when there is none (asks cryptsetup: a mapping whose
// /dev/mapper node is missing is still found).
StatusOr<std::optional<LuksMapping>> FindLuksMapping(const std::string& name,
                                                     const CommandLimits& limits);

// Closes the mapping `name`; OK when it is not open. FAILED_PRECONDITION when the kernel says it
// is in use. Callers check the mount table first (node/encrypted_volume.h): a bind mount of the
// device node does not hold the mapping open.
Status LuksClose(const std::string& name, const CommandLimits& limits);

// The names of this plugin's open mappings (/dev/mapper/oxide-csi-*).
std::vector<std::string> ListPluginMappings();

}  // namespace oxide::node
