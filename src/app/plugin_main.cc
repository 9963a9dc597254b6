// oxide-csi-plugin: reads the settings, opens the state database, serves CSI on the socket until
// SIGTERM/SIGINT, then shuts down gracefully. The main thread becomes the event-loop thread.
#include <absl/synchronization/mutex.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "app/plugin.h"
#include "config/settings.h"
#include "version.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = oxide::ParseCommandLine(args, oxide::ProcessEnvironment());
  if (!parsed.ok()) {
    std::fprintf(stderr, "oxide-csi-plugin: %s\n", parsed.status().message().c_str());
    return 2;
  }
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
  std::signal(SIGPIPE, SIG_IGN);
  // Debian builds Abseil without NDEBUG, which leaves its debug-only deadlock detector on: it
  // updates a global lock graph on every absl::Mutex lock inside gRPC (~1% of the plugin's CPU).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return oxide::RunPlugin(parsed->settings);
}
