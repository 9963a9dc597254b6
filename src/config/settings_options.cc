#include "config/settings_options.h"

#include <initializer_list>

namespace oxide::settings_options {

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
