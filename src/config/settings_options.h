// The settings parser's table: every flag with its environment variable, value hint, default and
// --help text, and how its value is checked and stored into Settings, in --help order (one table,
// in settings_options.cc). Pure: no option reads a file or asks a server. Internal to config/;
// any thread (the table is built once, on first use).
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

// Every option, in --help order.
const Options& All();
// The option named `flag` (without "--"), or null.
const Option* Find(std::string_view flag);

}  // namespace oxide::settings_options
