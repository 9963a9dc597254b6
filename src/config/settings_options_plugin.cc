// The options of the plugin as a whole: where it serves, what it logs, how it stops and tunes its
// loop (settings_options.h).
#include <chrono>

#include "config/option_values.h"
#include "config/settings_options.h"
#include "config/validation.h"
#include "metrics/listen_address.h"

namespace oxide::settings_options {

// endpoint, mode, driver-name, state-db, metrics-address, socket-mode.
Options ServingOptions() {
  return {
      {"endpoint", "CSI_ENDPOINT", "unix:///path.sock", "(required)",
       "CSI endpoint: a unix socket, as unix:///abs/path.sock or /abs/path.sock",
       [](Settings& s, const std::string& v) {
         auto path = SocketPathFromEndpoint(v);
         if (!path.ok()) return InvalidSetting("endpoint", path.status().message());
         s.endpoint = v;
         s.socket_path = *path;
         return Status::Ok();
       }},
      {"mode", nullptr, "controller|node|all", "all", "which CSI services to serve",
       [](Settings& s, const std::string& v) {
         if (v == "controller")
           s.mode = Mode::kController;
         else if (v == "node")
           s.mode = Mode::kNode;
         else if (v == "all")
           s.mode = Mode::kAll;
         else
           return InvalidSetting("mode", "\"" + v + "\" is not one of controller, node, all");
         return Status::Ok();
       }},
      {"driver-name", nullptr, "NAME", kDefaultDriverName, "CSI driver name (GetPluginInfo)",
       [](Settings& s, const std::string& v) {
         if (!IsValidDriverName(v)) {
           return InvalidSetting("driver-name",
                                 "\"" + v +
                                     "\" is not a CSI driver name (at most 63 characters, "
                                     "alphanumerics, '-' and '.', alphanumeric at both ends)");
         }
         s.driver_name = v;
         return Status::Ok();
       }},
      {"state-db", nullptr, "PATH", kDefaultStateDb,
       "SQLite state database (journal and volume states); never in the socket's directory",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v[0] != '/' || v.back() == '/') {
           return InvalidSetting("state-db", "\"" + v + "\" is not an absolute file path");
         }
         s.state_db = v;
         return Status::Ok();
       }},
      {"metrics-address", "OXIDE_CSI_METRICS_ADDRESS", "HOST:PORT", "(off)",
       "serve Prometheus metrics at http://HOST:PORT/metrics and a liveness check at /healthz, "
       "e.g. 0.0.0.0:9810 or [::]:9810",
       [](Settings& s, const std::string& v) {
         StatusOr<metrics::ListenAddress> address = metrics::ParseListenAddress(v);
         if (!address.ok()) return InvalidSetting("metrics-address", address.status().message());
         s.serve_metrics = true;
         s.metrics_host = address->host;
         s.metrics_port = address->port;
         return Status::Ok();
       }},
      {"socket-mode", nullptr, "OCTAL", "0660", "permissions of the CSI socket file",
       [](Settings& s, const std::string& v) {
         int mode = 0;
         Status st = ParseInt("socket-mode", v, 0, 0777, 8, &mode);
         s.socket_mode = static_cast<mode_t>(mode);
         return st;
       }},
  };
}

// log-level, log-format, shutdown-grace(-seconds).
Options LoggingAndShutdownOptions() {
  return {
      {"log-level", nullptr, "debug|info|warn|error", "info", "least severe level logged",
       [](Settings& s, const std::string& v) {
         if (!log::ParseLevel(v, &s.log_level)) {
           return InvalidSetting("log-level",
                                 "\"" + v + "\" is not one of debug, info, warn, error");
         }
         return Status::Ok();
       }},
      {"log-format", nullptr, "text|json", "text", "log record format (stderr, one per line)",
       [](Settings& s, const std::string& v) {
         if (!log::ParseFormat(v, &s.log_format)) {
           return InvalidSetting("log-format", "\"" + v + "\" is not one of text, json");
         }
         return Status::Ok();
       }},
      {"shutdown-grace", nullptr, "DURATION", "15s",
       "on SIGTERM/SIGINT, how long calls in flight and then operations still running (they "
       "outlive their calls) may take to finish, all together; keep it below the pod's "
       "terminationGracePeriodSeconds (units ms, s, m, h)",
       [](Settings& s, const std::string& v) {
         return ParseDuration("shutdown-grace", v, std::chrono::hours(1), &s.shutdown_grace);
       }},
      {"shutdown-grace-seconds", nullptr, "N", "15",
       "the older name of --shutdown-grace, in whole seconds (--shutdown-grace-seconds=20 is "
       "--shutdown-grace=20s)",
       [](Settings& s, const std::string& v) {
         int seconds = 0;
         Status parsed = ParseInt("shutdown-grace-seconds", v, 0, 3600, 10, &seconds);
         s.shutdown_grace = std::chrono::seconds(seconds);
         return parsed;
       }},
  };
}

// rpc-spin-us, journal-prune (hidden), topology-zone.
Options TuningOptions() {
  return {
      IntOption("rpc-spin-us", "50",
                "after handling gRPC events, poll N microseconds for the next before sleeping "
                "(lower latency at light load for more CPU)",
                0, 1000, &Settings::rpc_spin_us),
      {"journal-prune", nullptr, "on|off", "on",
       "BENCHMARKS: off keeps every finished journal entry (no pruning, no compaction)",
       [](Settings& s, const std::string& v) {
         if (v != "on" && v != "off") return InvalidSetting("journal-prune", "must be on or off");
         s.journal_prune = v == "on";
         return Status::Ok();
       },
       true},
      {"topology-zone", nullptr, "NAME", "default",
       "value reported for the topology key topology.csi.oxide.computer/zone",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v.size() > 63)
           return InvalidSetting("topology-zone", "must be 1-63 characters");
         s.topology_zone = v;
         return Status::Ok();
       }},
  };
}

}  // namespace oxide::settings_options
