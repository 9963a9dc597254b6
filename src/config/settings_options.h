// The settings parser's table: every flag with its environment variable, value hint, default and
// --help text, and how its value is checked and stored into Settings. Kept in --help order; each
// area's options are defined in its own file (settings_options_*.cc). Pure: no option reads a
// file or asks a server. Internal to config/; any thread (the table is built once, on first use).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.h"
#include "util/status.h"

namespace oxide::settings_options {

struct Option {
  const char* flag;        // without the leading "--"
  const char* env;         // environment variable, or nullptr
  const char* value_hint;  // nullptr for a switch
  const char* default_text;
  const char* help;
  std::function<Status(Settings&, const std::string&)> apply;
  bool hidden = false;  // for tests; not listed by --help
};
using Options = std::vector<Option>;

// A number option ("N", no environment variable): a decimal between `min` and `max` stored in
// `field`.
Option IntOption(const char* flag, const char* default_text, const char* help, int min, int max,
                 int Settings::*field);
// A switch (no value, or =true/false/1/0) stored in `field`.
Option SwitchOption(const char* flag, const char* env, const char* default_text, const char* help,
                    bool Settings::*field);

// Every option, in --help order.
const Options& All();
// The option named `flag` (without "--"), or null.
const Option* Find(std::string_view flag);

// The pieces All() is put together from, in this order (settings_options_plugin.cc,
// settings_options_controller.cc, settings_options_node.cc).
Options ServingOptions();             // endpoint, mode, driver name, state db, metrics, socket
Options LoggingAndShutdownOptions();  // log level and format, shutdown grace
Options ControllerTimingOptions();    // clone snapshot sweep, Oxide outage grace
Options TuningOptions();              // rpc spin, journal pruning, topology zone
Options ControllerVolumeOptions();    // default volume size, advertised CSI version
Options OxideApiOptions();            // host, project, token file, CA, insecure
Options InstanceIdOptions();          // instance id, metadata file, sources
Options KubernetesOptions();          // node name, providerID wait, startup taint, API server
Options NodeCommandOptions();         // sysfs, device wait, command limits, concurrent formats
Options NodeVolumeOptions();          // XFS feature profile, attach limits

}  // namespace oxide::settings_options
