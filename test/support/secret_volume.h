// A Secret volume laid out and updated the way the kubelet does it, for token rotation tests: the
// file `token` is a symlink to `..data/token`, `..data` a symlink to a timestamped directory
// (`..2026_...`), and an update writes a new directory, points a new `..data_tmp` symlink at it
// and renames that over `..data` (one atomic swap), then deletes the old directory. Real files in
// a TempDir. Test thread only.
#pragma once

#include <string>

#include "support/temp_dir.h"

namespace oxide::testing {

class SecretVolume {
 public:
  // A volume holding `token` (written as the kubelet would: no trailing newline).
  explicit SecretVolume(const std::string& token);

  // The path the plugin is given (OXIDE_TOKEN_FILE).
  std::string token_path() const { return dir_.File("token"); }
  const std::string& directory() const { return dir_.path(); }

  // The kubelet's atomic update to a new content (may be empty).
  void Swap(const std::string& content);
  // `..data` points at a directory without the key: `token` dangles (cannot be read).
  void RemoveToken();

 private:
  std::string WriteGeneration(const std::string* content);
  void PointDataAt(const std::string& generation);

  TempDir dir_;
  std::string current_;  // the timestamped directory `..data` points at
  int generations_ = 0;
};

}  // namespace oxide::testing
