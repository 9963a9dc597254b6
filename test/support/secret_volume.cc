#include "support/secret_volume.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace oxide::testing {
namespace {

void Check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("secret volume: " + what + " failed");
}

}  // namespace

SecretVolume::SecretVolume(const std::string& token) {
  current_ = WriteGeneration(&token);
  Check(::symlink(current_.c_str(), dir_.File("..data").c_str()) == 0, "symlink ..data");
  Check(::symlink("..data/token", token_path().c_str()) == 0, "symlink token");
}

std::string SecretVolume::WriteGeneration(const std::string* content) {
  // The kubelet's names look like ..2026_11_24_10_00_00.123456789; a counter keeps them unique.
  const std::string name = "..2026_11_24_10_00_00." + std::to_string(++generations_);
  Check(::mkdir(dir_.File(name).c_str(), 0755) == 0, "mkdir " + name);
  if (content != nullptr) WriteFile(dir_.File(name + "/token"), *content);
  return name;
}

void SecretVolume::PointDataAt(const std::string& generation) {
  const std::string tmp = dir_.File("..data_tmp");
  Check(::symlink(generation.c_str(), tmp.c_str()) == 0, "symlink ..data_tmp");
  Check(::rename(tmp.c_str(), dir_.File("..data").c_str()) == 0, "rename ..data_tmp");
  std::error_code ignored;
  std::filesystem::remove_all(dir_.File(current_), ignored);
  current_ = generation;
}

void SecretVolume::Swap(const std::string& content) {
  PointDataAt(WriteGeneration(&content));
}

void SecretVolume::RemoveToken() {
  PointDataAt(WriteGeneration(nullptr));
}

}  // namespace oxide::testing
