#include "support/cryptsetup_double.h"

#include <filesystem>
#include <fstream>

#ifndef OXIDE_FAKE_CRYPTSETUP
#error "OXIDE_FAKE_CRYPTSETUP must name test/support/fake_cryptsetup.sh"
#endif

namespace oxide::testing {

bool KernelHasDeviceMapper() {
  std::ifstream misc("/proc/misc");
  std::string line;
  while (std::getline(misc, line))
    if (line.find("device-mapper") != std::string::npos) return true;
  return false;
}

std::string UseCryptsetupWrapper(PluginSetup& setup) {
  const std::string bin = setup.File("bin");
  const std::string state = setup.File("cryptsetup-state");
  std::filesystem::create_directories(bin);
  std::filesystem::create_directories(state);
  std::error_code ignored;
  std::filesystem::create_symlink(OXIDE_FAKE_CRYPTSETUP, bin + "/cryptsetup", ignored);
  setup.env["PATH"] = bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  setup.env["FAKE_CRYPTSETUP_STATE"] = state;
  if (KernelHasDeviceMapper()) setup.env["FAKE_CRYPTSETUP_PASSTHROUGH"] = "1";
  return state;
}

std::string CryptsetupCommand(const PluginSetup& setup) {
  std::string command = "FAKE_CRYPTSETUP_STATE=" + setup.File("cryptsetup-state");
  if (KernelHasDeviceMapper()) command += " FAKE_CRYPTSETUP_PASSTHROUGH=1";
  return command + " " + setup.File("bin") + "/cryptsetup";
}

}  // namespace oxide::testing
