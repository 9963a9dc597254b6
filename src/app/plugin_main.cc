// oxide-csi-plugin: reads the settings, opens the state database, serves CSI on the socket until
// SIGTERM/SIGINT, then shuts down gracefully. The main thread becomes the event-loop thread.
#include <absl/synchronization/mutex.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "app/plugin.h"
#include "config/settings.h"
#include "util/log.h"
#include "version.h"

namespace {

// A setting that cannot be used: written as a log record when the command line asks for JSON, so
// that a collector reading JSON lines gets this one too. Returns the exit code.
int RefuseSettings(const std::vector<std::string>& args, const oxide::Status& why) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--log-format=json" ||
        (args[i] == "--log-format" && i + 1 < args.size() && args[i + 1] == "json")) {
      oxide::log::Configure(oxide::log::Level::kInfo, oxide::log::Format::kJson);
      oxide::log::Error("oxide-csi-plugin: " + why.message());
      return 2;
    }
  }
  std::fprintf(stderr, "oxide-csi-plugin: %s\n", why.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = oxide::ParseCommandLine(args, oxide::ProcessEnvironment());
  if (!parsed.ok()) return RefuseSettings(args, parsed.status());
  switch (parsed->action) {
    case oxide::ParsedCommandLine::Action::kHelp:
      std::fputs(oxide::HelpText().c_str(), stdout);
      return 0;
    case oxide::ParsedCommandLine::Action::kVersion:
      std::printf("oxide-csi-plugin %s\n", oxide::kVersion);
      return 0;
    case oxide::ParsedCommandLine::Action::kRun:
      break;
  }
  // The files the settings name (the Oxide token, its CA), read before anything runs, and refused
  // as a setting is; the token is registered with the log's redaction here.
  oxide::StatusOr<oxide::backend::ClientConfig> oxide_config = oxide::backend::ClientConfig{};
  if (parsed->settings.ServesController()) {
    oxide_config = oxide::backend::ReadClientConfig(parsed->settings);
    if (!oxide_config.ok()) return RefuseSettings(args, oxide_config.status());
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Debian builds Abseil without NDEBUG, which leaves its debug-only deadlock detector on: it
  // updates a global lock graph on every absl::Mutex lock inside gRPC (~1% of the plugin's CPU).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return oxide::RunPlugin(parsed->settings, *oxide_config);
}
