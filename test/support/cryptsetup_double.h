// Test support: runs the plugin with the cryptsetup its encryption tests can use here. Where the
// kernel has no device-mapper (this machine, CI), `cryptsetup open/status/close` are played by
// test/support/fake_cryptsetup.sh (real LUKS2 header and passphrase checks, a loop device as the
// mapping); with device-mapper the real cryptsetup runs behind the same wrapper, which records
// every command line either way. Test and benchmark main threads only.
#pragma once

#include <string>

#include "support/plugin_setup.h"

namespace oxide::testing {

// True when /proc/misc lists device-mapper.
bool KernelHasDeviceMapper();

// Puts the wrapper first in the plugin's PATH (`setup`'s environment) and gives it a state
// directory in the setup's folder, whose path it returns (argv.log there: every command line).
std::string UseCryptsetupWrapper(PluginSetup& setup);

// A shell command (arguments to append) that runs cryptsetup as the plugin does: the wrapper,
// with the plugin's records.
std::string CryptsetupCommand(const PluginSetup& setup);

}  // namespace oxide::testing
