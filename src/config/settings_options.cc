#include "config/settings_options.h"

#include <initializer_list>

#include "config/option_values.h"

namespace oxide::settings_options {

Option IntOption(const char* flag, const char* default_text, const char* help, int min, int max,
                 int Settings::*field) {
  return {flag,
          nullptr,
          "N",
          default_text,
          help,
          [flag, min, max, field](Settings& s, const std::string& v) {
            return ParseInt(flag, v, min, max, 10, &(s.*field));
          }};
}

Option SwitchOption(const char* flag, const char* env, const char* default_text, const char* help,
                    bool Settings::*field) {
  return {flag, env, nullptr, default_text, help, [flag, field](Settings& s, const std::string& v) {
            return ParseBool(flag, v, &(s.*field));
          }};
}

const Options& All() {
  static const Options options = [] {
    Options all;
    for (Options (*area)() :
         {ServingOptions, LoggingAndShutdownOptions, ControllerTimingOptions, TuningOptions,
          ControllerVolumeOptions, OxideApiOptions, InstanceIdOptions, KubernetesOptions,
          NodeCommandOptions, NodeVolumeOptions}) {
      for (Option& option : area())
        all.push_back(std::move(option));
    }
    return all;
  }();
  return options;
}

const Option* Find(std::string_view flag) {
  for (const Option& option : All()) {
    if (flag == option.flag) return &option;
  }
  return nullptr;
}

}  // namespace oxide::settings_options
