// The one options table (settings_options.h): every option's row, its areas in --help order, and
// the helpers that build the rows read by a shared syntax.
#include "config/settings_options.h"

#include <chrono>

#include "config/validation.h"
#include "metrics/listen_address.h"
#include "util/utf8_cut.h"

namespace oxide::settings_options {
namespace {

// An option whose value is read by one of the shared syntaxes (`parse(flag, text, &value)`, one
// of settings.h's Parse*) straight into `field`.
template <typename T, typename Parse>
Option FieldOption(const char* flag, const char* env, const char* value_hint,
                   const char* default_text, const char* help, T Settings::*field, Parse parse) {
  auto apply = [flag, field, parse](Settings& s, const std::string& v) {
    return parse(flag, v, &(s.*field));
  };
  return {flag, env, value_hint, default_text, help, apply};
}

// A number option ("N", no environment variable): a decimal between `min` and `max` stored in
// `field`.
Option IntOption(const char* flag, const char* default_text, const char* help, int min, int max,
                 int Settings::*field) {
  return FieldOption(flag, nullptr, "N", default_text, help, field,
                     [min, max](const char* name, const std::string& v, int* out) {
                       return ParseInt(name, v, min, max, 10, out);
                     });
}

// A duration option ("DURATION": a whole number with a unit, ms, s, m or h) between `min` (whole
// seconds) and `max`, stored in `field`.
Option DurationOption(const char* flag, const char* env, const char* default_text, const char* help,
                      std::chrono::seconds min, std::chrono::milliseconds max,
                      std::chrono::milliseconds Settings::*field) {
  return FieldOption(
      flag, env, "DURATION", default_text, help, field,
      [min, max](const char* name, const std::string& v, std::chrono::milliseconds* out) {
        Status parsed = ParseDuration(name, v, max, out);
        if (parsed.ok() && *out < min) {
          return InvalidSetting(name, "must be at least " + std::to_string(min.count()) + "s");
        }
        return parsed;
      });
}

// A switch (no value, or =true/false/1/0) stored in `field`.
Option SwitchOption(const char* flag, const char* env, const char* default_text, const char* help,
                    bool Settings::*field) {
  return FieldOption(flag, env, nullptr, default_text, help, field, ParseBool);
}

Options ServingOptions() {
  return {
      // Serving: endpoint, mode, driver-name, state-db, metrics-address, socket-mode.
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

Options ProcessOptions() {
  return {
      // Logging and shutdown: log-level, log-format, shutdown-grace(-seconds).
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
      DurationOption("shutdown-grace", nullptr, "15s",
                     "on SIGTERM/SIGINT, how long calls in flight and then operations still "
                     "running (they outlive their calls) may take to finish, all together; keep "
                     "it below the pod's terminationGracePeriodSeconds (units ms, s, m, h)",
                     std::chrono::seconds(0), std::chrono::hours(1), &Settings::shutdown_grace),
      {"shutdown-grace-seconds", nullptr, "N", "15",
       "the older name of --shutdown-grace, in whole seconds (--shutdown-grace-seconds=20 is "
       "--shutdown-grace=20s)",
       [](Settings& s, const std::string& v) {
         int seconds = 0;
         Status parsed = ParseInt("shutdown-grace-seconds", v, 0, 3600, 10, &seconds);
         s.shutdown_grace = std::chrono::seconds(seconds);
         return parsed;
       }},

      // Controller timing: clone-snapshot-max-age, probe-oxide-grace.
      DurationOption("clone-snapshot-max-age", nullptr, "20m",
                     "controller: a clone's temporary snapshot (csi-clone-*) older than this (by "
                     "Oxide's time_created) that no unfinished operation of this replica names is "
                     "deleted, at start and periodically; keep it well above the 10 min operation "
                     "limit, since another replica may be using a younger one (see "
                     "docs/replicas.md)",
                     std::chrono::seconds(1), std::chrono::hours(24 * 7),
                     &Settings::clone_snapshot_max_age),
      DurationOption("probe-oxide-grace", "OXIDE_CSI_PROBE_OXIDE_GRACE", "60s",
                     "controller: how long Oxide may fail to answer (connection errors, 5xx) "
                     "before oxide_csi_oxide_api_up reads 0 and an error is logged; 0 at once "
                     "(units ms, s, m, h). Probe and liveness never depend on Oxide",
                     std::chrono::seconds(0), std::chrono::hours(24), &Settings::probe_oxide_grace),

      // Tuning: rpc-spin-us, journal-prune (hidden), topology-zone.
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

Options ControllerOptions() {
  return {
      // Controller volumes: default-volume-size-gib, advertise-csi-version.
      IntOption("default-volume-size-gib", "10",
                "size of a volume whose CreateVolume gives no capacity range (1-1023)", 1, 1023,
                &Settings::default_volume_size_gib),
      {"advertise-csi-version", nullptr, "1.12|1.10", "1.12",
       "controller: newest CSI version whose capabilities are advertised; 1.10 hides "
       "GET_SNAPSHOT from clients that reject capabilities they do not know (GetSnapshot is "
       "served either way)",
       [](Settings& s, const std::string& v) {
         if (v == "1.12")
           s.advertised_csi_minor = 12;
         else if (v == "1.10")
           s.advertised_csi_minor = 10;
         else
           return InvalidSetting("advertise-csi-version", "\"" + v + "\" is not one of 1.12, 1.10");
         return Status::Ok();
       }},

      // The Oxide API: oxide-host, oxide-project, oxide-token-file, oxide-ca-file, oxide-insecure.
      // The token file and CA file are only named here: the backend reads them at start
      // (backend/client_config.h).
      {"oxide-host", "OXIDE_HOST", "URL", "(required for the controller)",
       "Oxide silo API address, https://...",
       [](Settings& s, const std::string& v) {
         if (v.rfind("https://", 0) != 0 && v.rfind("http://", 0) != 0) {
           return InvalidSetting("oxide-host", "\"" + v + "\" must start with https://");
         }
         s.oxide_host = v;
         while (!s.oxide_host.empty() && s.oxide_host.back() == '/')
           s.oxide_host.pop_back();
         return Status::Ok();
       }},
      {"oxide-project", "OXIDE_PROJECT", "NAME|ID", "(required for the controller)",
       "Oxide project that holds the volumes",
       [](Settings& s, const std::string& v) {
         std::string problem = IsUuid(v) ? "" : OxideNameProblem(v);
         if (!problem.empty()) return InvalidSetting("oxide-project", "\"" + v + "\": " + problem);
         s.oxide_project = IsUuid(v) ? ToLower(v) : v;
         return Status::Ok();
       }},
      {"oxide-token-file", "OXIDE_TOKEN_FILE", "PATH", "(or OXIDE_TOKEN)",
       "file holding the Oxide API token; the token itself is read only from OXIDE_TOKEN or "
       "this file, never from the command line; the file is watched, so a rotated token is used "
       "without a restart (OXIDE_TOKEN is read once)",
       [](Settings& s, const std::string& v) {
         // Read at start by the backend (backend/client_config.h); an empty path is the
         // unreadable file it always was.
         if (v.empty())
           return InvalidSetting("oxide-token-file", "cannot read the Oxide token file ");
         s.oxide_token_file = v;
         s.oxide_token_file_from_env = false;  // a flag; ApplyEnvironment marks the variable's
         return Status::Ok();
       }},
      {"oxide-ca-file", nullptr, "PATH", "(system CA bundle)",
       "PEM bundle of the CA that signed the Oxide API certificate",
       [](Settings& s, const std::string& v) {
         // Checked for reading at start by the backend (backend/client_config.h).
         if (v.empty()) return InvalidSetting("oxide-ca-file", "cannot read ");
         s.oxide_ca_file = v;
         return Status::Ok();
       }},
      SwitchOption("oxide-insecure", nullptr, "false",
                   "TESTS ONLY: skip TLS verification and allow http:// Oxide hosts",
                   &Settings::oxide_insecure),

  };
}

Options NodeIdentityOptions() {
  return {
      // Node, instance id: instance-id, instance-metadata-file (read at node start),
      // instance-id-source.
      {"instance-id", "OXIDE_INSTANCE_ID", "UUID", "(none)",
       "node: id of the Oxide instance this node runs on (the CSI node id); the env source",
       [](Settings& s, const std::string& v) {
         if (!IsUuid(v)) return InvalidSetting("instance-id", "\"" + v + "\" is not a UUID");
         s.instance_id = ToLower(v);
         return Status::Ok();
       }},
      {"instance-metadata-file", nullptr, "PATH", "(none)",
       "node: KEY=VALUE file with OXIDE_INSTANCE_ID=<uuid>, e.g. written by an init container; "
       "the file source (read at start; a missing file is skipped)",
       [](Settings& s, const std::string& v) {
         s.instance_metadata_file = v;
         return Status::Ok();
       }},
      {"instance-id-source", "OXIDE_INSTANCE_ID_SOURCE", "LIST", "env,file,kubernetes",
       "node: where to learn the Oxide instance this node runs on, tried in this order until one "
       "answers: env (OXIDE_INSTANCE_ID), file (--instance-metadata-file), kubernetes (this "
       "node's Node object: spec.providerID oxide://<uuid>, or without one the node name as the "
       "instance name; needs NODE_NAME and RBAC get on nodes)",
       [](Settings& s, const std::string& v) {
         auto sources = ParseInstanceIdSources(v);
         if (!sources.ok()) return InvalidSetting("instance-id-source", sources.status().message());
         s.instance_id_sources = *sources;
         return Status::Ok();
       }},

      // Node, Kubernetes: node-name, wait-for-provider-id, remove-startup-taint, kubernetes-*.
      {"node-name", "NODE_NAME", "NAME", "(none)",
       "node: this Kubernetes node's name (downward API spec.nodeName), for the kubernetes "
       "instance id source",
       [](Settings& s, const std::string& v) {
         if (!IsKubernetesNodeName(v)) {
           return InvalidSetting("node-name", "\"" + CutUtf8(v, 128) +
                                                  "\" is not a Kubernetes node name (lower-case "
                                                  "alphanumerics, '-' and '.', at most 253)");
         }
         s.node_name = v;
         return Status::Ok();
       }},
      SwitchOption("wait-for-provider-id", "OXIDE_CSI_WAIT_FOR_PROVIDER_ID", "false",
                   "node: with the kubernetes instance id source, never take the node name as the "
                   "id: wait (without serving the socket) until the Node has spec.providerID. "
                   "Without this flag the node waits only while the Node carries the cloud "
                   "controller manager's taint node.cloudprovider.kubernetes.io/uninitialized",
                   &Settings::wait_for_provider_id),
      SwitchOption("remove-startup-taint", "OXIDE_CSI_REMOVE_STARTUP_TAINT", "true",
                   "node: once the plugin serves and node-driver-registrar has registered it (the "
                   "node's CSINode lists the driver), remove the taint "
                   "csi.oxide.computer/agent-not-ready from this node's Node, so that pods with "
                   "Oxide volumes land only on nodes whose plugin is ready (needs NODE_NAME and "
                   "RBAC get/patch on nodes, get on csinodes; false leaves the taint to others)",
                   &Settings::remove_startup_taint),
      IntOption("kubernetes-timeout-seconds", "10",
                "node: limit on connecting to, and on each whole exchange with, the Kubernetes API "
                "server (reading this node's Node object, removing the startup taint)",
                1, 300, &Settings::kubernetes_timeout_seconds),
      {"kubernetes-credentials-dir", nullptr, "PATH", kDefaultKubernetesCredentialsDir,
       "TESTS: directory with the service account's token and ca.crt",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v[0] != '/') {
           return InvalidSetting("kubernetes-credentials-dir", "\"" + v + "\" is not absolute");
         }
         s.kubernetes_credentials_dir = v;
         return Status::Ok();
       },
       true},

  };
}

Options NodeDeviceOptions() {
  return {
      // Node, devices and commands: sysfs-root, device-wait-seconds, the command time limits,
      // max-concurrent-formats.
      {"sysfs-root", nullptr, "PATH", "/sys",
       "node: sysfs root where block devices and their NVMe serials are found (tests use a "
       "fake tree)",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v[0] != '/')
           return InvalidSetting("sysfs-root", "\"" + v + "\" is not absolute");
         s.sysfs_root = v;
         while (s.sysfs_root.size() > 1 && s.sysfs_root.back() == '/')
           s.sysfs_root.pop_back();
         return Status::Ok();
       }},
      IntOption("device-wait-seconds", "60",
                "node: how long NodeStageVolume waits for an attached disk's device to appear", 0,
                3600, &Settings::device_wait_seconds),
      IntOption("mkfs-timeout-seconds", "600",
                "node: limit on one mkfs run; on expiry it is killed with its process group and "
                "the stage fails with DEADLINE_EXCEEDED (the kubelet retries)",
                1, 86400, &Settings::mkfs_timeout_seconds),
      IntOption("fsck-timeout-seconds", "600",
                "node: limit on the filesystem check before a mount (a large filesystem used "
                "elsewhere may need a long repair)",
                1, 86400, &Settings::fsck_timeout_seconds),
      IntOption("command-timeout-seconds", "60",
                "node: limit on every other external command (blkid, tune2fs, xfs_db)", 1, 3600,
                &Settings::command_timeout_seconds),
      IntOption("max-concurrent-formats", "2",
                "node: how many mkfs may run at once; further formats wait their turn (mkfs of a "
                "large disk takes memory)",
                1, 64, &Settings::max_concurrent_formats),

      // Node, volumes: xfs-feature-profile, volume-attach-limit (and its older name),
      // reserved-volume-attachments.
      {"xfs-feature-profile", nullptr, "PROFILE", "lts_5.4",
       "node: the feature set mkfs.xfs gives new XFS filesystems, so that older kernels mount "
       "them: lts_4.19, lts_5.4, lts_5.10, lts_5.15 or lts_6.1 (the oldest Linux that mounts "
       "it; xfsprogs' LTS profiles), none (mkfs.xfs's own defaults) or the absolute path of an "
       "mkfs.xfs config file (-c options=PATH)",
       [](Settings& s, const std::string& v) {
         static const char* const kProfiles[] = {"lts_4.19", "lts_5.4", "lts_5.10",
                                                 "lts_5.15", "lts_6.1", "none"};
         bool valid = !v.empty() && v[0] == '/';
         for (const char* profile : kProfiles)
           valid = valid || v == profile;
         if (!valid) {
           return InvalidSetting(
               "xfs-feature-profile",
               "\"" + v +
                   "\" is not lts_4.19, lts_5.4, lts_5.10, lts_5.15, lts_6.1, none "
                   "or an absolute path of an mkfs.xfs config file");
         }
         s.xfs_feature_profile = v;
         return Status::Ok();
       }},
      IntOption(
          "volume-attach-limit", "0 (computed)",
          "node: volumes this node may hold (NodeGetInfo), set outright; 0 = computed: 12 (Oxide's "
          "per-instance disk limit, boot disk included) minus the NVMe disks present at start that "
          "the plugin does not manage minus --reserved-volume-attachments",
          0, 12, &Settings::volume_attach_limit),
      IntOption("max-volumes-per-node", "0 (computed)", "the older name of --volume-attach-limit",
                0, 12, &Settings::volume_attach_limit),
      IntOption("reserved-volume-attachments", "0",
                "node: attachments the computed limit leaves free for disks attached outside the "
                "plugin later (the boot disk and disks present at start are already counted); not "
                "with --volume-attach-limit",
                0, 11, &Settings::reserved_volume_attachments),
  };
}

}  // namespace

// One data table, its sections in --help order: serving; the process (logging, shutdown, the
// controller's timing, tuning: the order --help has always had); the controller (new volumes,
// the Oxide API); the node's identity (instance id, Kubernetes); the node's devices and volumes.
const Options& All() {
  static const Options options = [] {
    Options all;
    for (Options part : {ServingOptions(), ProcessOptions(), ControllerOptions(),
                         NodeIdentityOptions(), NodeDeviceOptions()}) {
      all.insert(all.end(), part.begin(), part.end());
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
