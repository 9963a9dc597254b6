#include "config/settings.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "config/validation.h"
#include "metrics/listen_address.h"
#include "util/utf8_cut.h"

extern char** environ;

namespace oxide {
namespace {

struct Option {
  const char* flag;        // without the leading "--"
  const char* env;         // environment variable, or nullptr
  const char* value_hint;  // nullptr for a switch
  const char* default_text;
  const char* help;
  std::function<Status(Settings&, const std::string&)> apply;
  bool hidden = false;  // for tests; not listed by --help
};

Status Invalid(const char* flag, const std::string& why) {
  return InvalidArgument(std::string("invalid setting --") + flag + ": " + why);
}

Status ParseInt(const char* flag, const std::string& text, int min, int max, int base, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return Invalid(flag, "\"" + text + "\" is not a number between " + std::to_string(min) +
                             " and " + std::to_string(max));
  }
  *out = value;
  return Status::Ok();
}

// A duration: a whole number with a unit, ms, s, m or h ("500ms", "60s", "2m"); "0" alone is
// zero. At most `max`.
Status ParseDuration(const char* flag, const std::string& text, std::chrono::milliseconds max,
                     std::chrono::milliseconds* out) {
  const Status bad =
      Invalid(flag, "\"" + text + "\" is not a duration such as 500ms, 60s, 2m or 1h (at most " +
                        std::to_string(max.count() / 1000) + "s)");
  int64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || number < 0 || end == text.data()) return bad;
  const std::string unit(end, text.data() + text.size());
  int64_t unit_ms = 0;
  if (unit == "ms")
    unit_ms = 1;
  else if (unit == "s")
    unit_ms = 1000;
  else if (unit == "m")
    unit_ms = 60'000;
  else if (unit == "h")
    unit_ms = 3'600'000;
  else if (unit.empty() && number == 0)
    unit_ms = 1;
  else
    return bad;
  if (number > max.count() / unit_ms) return bad;
  *out = std::chrono::milliseconds(number * unit_ms);
  return Status::Ok();
}

Status ParseBool(const char* flag, const std::string& text, bool* out) {
  if (text == "true" || text == "1" || text.empty())
    *out = true;
  else if (text == "false" || text == "0")
    *out = false;
  else
    return Invalid(flag, "\"" + text + "\" is not true or false");
  return Status::Ok();
}

// Setting files are small: a token is well under 1 KiB, an instance metadata file a few lines.
// A file far larger (or endless, such as /dev/zero) is not one, and reading it whole would take
// the memory with it.
constexpr size_t kLargestSettingFile = 64 * 1024;

// The file's text; nullopt when it cannot be read; more than kLargestSettingFile bytes when it is
// larger than that (the caller refuses it).
std::optional<std::string> ReadSettingFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kLargestSettingFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::string TooLarge(const std::string& what) {
  return what + " is larger than " + std::to_string(kLargestSettingFile / 1024) + " KiB";
}

}  // namespace

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::optional<std::string> text = ReadSettingFile(path);
  if (!text) return InvalidArgument("cannot read the Oxide token file " + path);
  if (text->size() > kLargestSettingFile) {
    return InvalidArgument(TooLarge("the Oxide token file " + path) +
                           "; it should hold only the token");
  }
  std::string token = std::move(*text);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
    token.pop_back();
  if (token.empty()) return InvalidArgument("the Oxide token file " + path + " is empty");
  return token;
}

namespace {

const std::vector<Option>& Options() {
  static const std::vector<Option> options = {
      {"endpoint", "CSI_ENDPOINT", "unix:///path.sock", "(required)",
       "CSI endpoint: a unix socket, as unix:///abs/path.sock or /abs/path.sock",
       [](Settings& s, const std::string& v) {
         auto path = SocketPathFromEndpoint(v);
         if (!path.ok()) return Invalid("endpoint", path.status().message());
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
           return Invalid("mode", "\"" + v + "\" is not one of controller, node, all");
         return Status::Ok();
       }},
      {"driver-name", nullptr, "NAME", kDefaultDriverName, "CSI driver name (GetPluginInfo)",
       [](Settings& s, const std::string& v) {
         if (!IsValidDriverName(v)) {
           return Invalid("driver-name",
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
           return Invalid("state-db", "\"" + v + "\" is not an absolute file path");
         }
         s.state_db = v;
         return Status::Ok();
       }},
      {"metrics-address", "OXIDE_CSI_METRICS_ADDRESS", "HOST:PORT", "(off)",
       "serve Prometheus metrics at http://HOST:PORT/metrics and a liveness check at /healthz, "
       "e.g. 0.0.0.0:9810 or [::]:9810",
       [](Settings& s, const std::string& v) {
         StatusOr<metrics::ListenAddress> address = metrics::ParseListenAddress(v);
         if (!address.ok()) return Invalid("metrics-address", address.status().message());
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
      {"log-level", nullptr, "debug|info|warn|error", "info", "least severe level logged",
       [](Settings& s, const std::string& v) {
         if (!log::ParseLevel(v, &s.log_level)) {
           return Invalid("log-level", "\"" + v + "\" is not one of debug, info, warn, error");
         }
         return Status::Ok();
       }},
      {"log-format", nullptr, "text|json", "text", "log record format (stderr, one per line)",
       [](Settings& s, const std::string& v) {
         if (!log::ParseFormat(v, &s.log_format)) {
           return Invalid("log-format", "\"" + v + "\" is not one of text, json");
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
      {"clone-snapshot-max-age", nullptr, "DURATION", "20m",
       "controller: a clone's temporary snapshot (csi-clone-*) older than this (by Oxide's "
       "time_created) that no unfinished operation of this replica names is deleted, at start "
       "and periodically; keep it well above the 10 min operation limit, since another replica "
       "may be using a younger one (see docs/replicas.md)",
       [](Settings& s, const std::string& v) {
         Status parsed = ParseDuration("clone-snapshot-max-age", v, std::chrono::hours(24 * 7),
                                       &s.clone_snapshot_max_age);
         if (parsed.ok() && s.clone_snapshot_max_age < std::chrono::seconds(1)) {
           return Invalid("clone-snapshot-max-age", "must be at least 1s");
         }
         return parsed;
       }},
      {"probe-oxide-grace", "OXIDE_CSI_PROBE_OXIDE_GRACE", "DURATION", "60s",
       "controller: how long Oxide may fail to answer (connection errors, 5xx) before "
       "oxide_csi_oxide_api_up reads 0 and an error is logged; 0 at once (units ms, s, m, h). "
       "Probe and liveness never depend on Oxide",
       [](Settings& s, const std::string& v) {
         return ParseDuration("probe-oxide-grace", v, std::chrono::hours(24), &s.probe_oxide_grace);
       }},
      {"rpc-spin-us", nullptr, "N", "50",
       "after handling gRPC events, poll N microseconds for the next before sleeping (lower "
       "latency at light load for more CPU)",
       [](Settings& s, const std::string& v) {
         return ParseInt("rpc-spin-us", v, 0, 1000, 10, &s.rpc_spin_us);
       }},
      {"journal-prune", nullptr, "on|off", "on",
       "BENCHMARKS: off keeps every finished journal entry (no pruning, no compaction)",
       [](Settings& s, const std::string& v) {
         if (v != "on" && v != "off") return Invalid("journal-prune", "must be on or off");
         s.journal_prune = v == "on";
         return Status::Ok();
       },
       true},
      {"topology-zone", nullptr, "NAME", "default",
       "value reported for the topology key topology.csi.oxide.computer/zone",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v.size() > 63) return Invalid("topology-zone", "must be 1-63 characters");
         s.topology_zone = v;
         return Status::Ok();
       }},
      {"default-volume-size-gib", nullptr, "N", "10",
       "size of a volume whose CreateVolume gives no capacity range (1-1023)",
       [](Settings& s, const std::string& v) {
         return ParseInt("default-volume-size-gib", v, 1, 1023, 10, &s.default_volume_size_gib);
       }},
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
           return Invalid("advertise-csi-version", "\"" + v + "\" is not one of 1.12, 1.10");
         return Status::Ok();
       }},
      {"oxide-host", "OXIDE_HOST", "URL", "(required for the controller)",
       "Oxide silo API address, https://...",
       [](Settings& s, const std::string& v) {
         if (v.rfind("https://", 0) != 0 && v.rfind("http://", 0) != 0) {
           return Invalid("oxide-host", "\"" + v + "\" must start with https://");
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
         if (!problem.empty()) return Invalid("oxide-project", "\"" + v + "\": " + problem);
         s.oxide_project = IsUuid(v) ? ToLower(v) : v;
         return Status::Ok();
       }},
      {"oxide-token-file", "OXIDE_TOKEN_FILE", "PATH", "(or OXIDE_TOKEN)",
       "file holding the Oxide API token; the token itself is read only from OXIDE_TOKEN or "
       "this file, never from the command line; the file is watched, so a rotated token is used "
       "without a restart (OXIDE_TOKEN is read once)",
       [](Settings& s, const std::string& v) {
         auto token = ReadTokenFile(v);
         if (!token.ok()) return Invalid("oxide-token-file", token.status().message());
         s.oxide_token = *token;
         s.oxide_token_file = v;
         return Status::Ok();
       }},
      {"oxide-ca-file", nullptr, "PATH", "(system CA bundle)",
       "PEM bundle of the CA that signed the Oxide API certificate",
       [](Settings& s, const std::string& v) {
         if (access(v.c_str(), R_OK) != 0) return Invalid("oxide-ca-file", "cannot read " + v);
         s.oxide_ca_file = v;
         return Status::Ok();
       }},
      {"oxide-insecure", nullptr, nullptr, "false",
       "TESTS ONLY: skip TLS verification and allow http:// Oxide hosts",
       [](Settings& s, const std::string& v) {
         return ParseBool("oxide-insecure", v, &s.oxide_insecure);
       }},
      {"instance-id", "OXIDE_INSTANCE_ID", "UUID", "(none)",
       "node: id of the Oxide instance this node runs on (the CSI node id); the env source",
       [](Settings& s, const std::string& v) {
         if (!IsUuid(v)) return Invalid("instance-id", "\"" + v + "\" is not a UUID");
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
         if (!sources.ok()) return Invalid("instance-id-source", sources.status().message());
         s.instance_id_sources = *sources;
         return Status::Ok();
       }},
      {"node-name", "NODE_NAME", "NAME", "(none)",
       "node: this Kubernetes node's name (downward API spec.nodeName), for the kubernetes "
       "instance id source",
       [](Settings& s, const std::string& v) {
         if (!IsKubernetesNodeName(v)) {
           return Invalid("node-name", "\"" + CutUtf8(v, 128) +
                                           "\" is not a Kubernetes node name (lower-case "
                                           "alphanumerics, '-' and '.', at most 253)");
         }
         s.node_name = v;
         return Status::Ok();
       }},
      {"wait-for-provider-id", "OXIDE_CSI_WAIT_FOR_PROVIDER_ID", nullptr, "false",
       "node: with the kubernetes instance id source, never take the node name as the id: wait "
       "(without serving the socket) until the Node has spec.providerID. Without this flag the "
       "node waits only while the Node carries the cloud controller manager's taint "
       "node.cloudprovider.kubernetes.io/uninitialized",
       [](Settings& s, const std::string& v) {
         return ParseBool("wait-for-provider-id", v, &s.wait_for_provider_id);
       }},
      {"remove-startup-taint", "OXIDE_CSI_REMOVE_STARTUP_TAINT", nullptr, "true",
       "node: once the plugin serves and node-driver-registrar has registered it (the node's "
       "CSINode lists the driver), remove the taint csi.oxide.computer/agent-not-ready from this "
       "node's Node, so that pods with Oxide volumes land only on nodes whose plugin is ready "
       "(needs NODE_NAME and RBAC get/patch on nodes, get on csinodes; false leaves the taint to "
       "others)",
       [](Settings& s, const std::string& v) {
         return ParseBool("remove-startup-taint", v, &s.remove_startup_taint);
       }},
      {"kubernetes-timeout-seconds", nullptr, "N", "10",
       "node: limit on connecting to, and on each whole exchange with, the Kubernetes API server "
       "(reading this node's Node object, removing the startup taint)",
       [](Settings& s, const std::string& v) {
         return ParseInt("kubernetes-timeout-seconds", v, 1, 300, 10,
                         &s.kubernetes_timeout_seconds);
       }},
      {"kubernetes-credentials-dir", nullptr, "PATH", kDefaultKubernetesCredentialsDir,
       "TESTS: directory with the service account's token and ca.crt",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v[0] != '/') {
           return Invalid("kubernetes-credentials-dir", "\"" + v + "\" is not absolute");
         }
         s.kubernetes_credentials_dir = v;
         return Status::Ok();
       },
       true},
      {"sysfs-root", nullptr, "PATH", "/sys",
       "node: sysfs root where block devices and their NVMe serials are found (tests use a "
       "fake tree)",
       [](Settings& s, const std::string& v) {
         if (v.empty() || v[0] != '/')
           return Invalid("sysfs-root", "\"" + v + "\" is not absolute");
         s.sysfs_root = v;
         while (s.sysfs_root.size() > 1 && s.sysfs_root.back() == '/')
           s.sysfs_root.pop_back();
         return Status::Ok();
       }},
      {"device-wait-seconds", nullptr, "N", "60",
       "node: how long NodeStageVolume waits for an attached disk's device to appear",
       [](Settings& s, const std::string& v) {
         return ParseInt("device-wait-seconds", v, 0, 3600, 10, &s.device_wait_seconds);
       }},
      {"mkfs-timeout-seconds", nullptr, "N", "600",
       "node: limit on one mkfs run; on expiry it is killed with its process group and the stage "
       "fails with DEADLINE_EXCEEDED (the kubelet retries)",
       [](Settings& s, const std::string& v) {
         return ParseInt("mkfs-timeout-seconds", v, 1, 86400, 10, &s.mkfs_timeout_seconds);
       }},
      {"fsck-timeout-seconds", nullptr, "N", "600",
       "node: limit on the filesystem check before a mount (a large filesystem used elsewhere may "
       "need a long repair)",
       [](Settings& s, const std::string& v) {
         return ParseInt("fsck-timeout-seconds", v, 1, 86400, 10, &s.fsck_timeout_seconds);
       }},
      {"command-timeout-seconds", nullptr, "N", "60",
       "node: limit on every other external command (blkid, tune2fs, xfs_db)",
       [](Settings& s, const std::string& v) {
         return ParseInt("command-timeout-seconds", v, 1, 3600, 10, &s.command_timeout_seconds);
       }},
      {"max-concurrent-formats", nullptr, "N", "2",
       "node: how many mkfs may run at once; further formats wait their turn (mkfs of a large "
       "disk takes memory)",
       [](Settings& s, const std::string& v) {
         return ParseInt("max-concurrent-formats", v, 1, 64, 10, &s.max_concurrent_formats);
       }},
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
           return Invalid("xfs-feature-profile",
                          "\"" + v +
                              "\" is not lts_4.19, lts_5.4, lts_5.10, lts_5.15, lts_6.1, none "
                              "or an absolute path of an mkfs.xfs config file");
         }
         s.xfs_feature_profile = v;
         return Status::Ok();
       }},
      {"volume-attach-limit", nullptr, "N", "0 (computed)",
       "node: volumes this node may hold (NodeGetInfo), set outright; 0 = computed: 12 (Oxide's "
       "per-instance disk limit, boot disk included) minus the NVMe disks present at start that "
       "the plugin does not manage minus --reserved-volume-attachments",
       [](Settings& s, const std::string& v) {
         return ParseInt("volume-attach-limit", v, 0, 12, 10, &s.volume_attach_limit);
       }},
      {"max-volumes-per-node", nullptr, "N", "0 (computed)",
       "the older name of --volume-attach-limit",
       [](Settings& s, const std::string& v) {
         return ParseInt("max-volumes-per-node", v, 0, 12, 10, &s.volume_attach_limit);
       }},
      {"reserved-volume-attachments", nullptr, "N", "0",
       "node: attachments the computed limit leaves free for disks attached outside the plugin "
       "later (the boot disk and disks present at start are already counted); not with "
       "--volume-attach-limit",
       [](Settings& s, const std::string& v) {
         return ParseInt("reserved-volume-attachments", v, 0, 11, 10,
                         &s.reserved_volume_attachments);
       }},
  };
  return options;
}

const Option* FindOption(std::string_view flag) {
  for (const Option& option : Options()) {
    if (flag == option.flag) return &option;
  }
  return nullptr;
}

Status Finish(Settings& s, const Environment& env) {
  if (s.socket_path.empty()) {
    return InvalidArgument("missing setting --endpoint (or CSI_ENDPOINT): the CSI socket to serve");
  }
  if (ParentDirectory(s.state_db) == ParentDirectory(s.socket_path)) {
    return Invalid("state-db", s.state_db +
                                   " is in the socket's directory; the CSI spec reserves that "
                                   "directory for the socket, so put the database elsewhere");
  }
  if (s.ServesController()) {
    auto token = env.find("OXIDE_TOKEN");
    if (token != env.end() && !token->second.empty()) {
      if (!s.oxide_token.empty()) {
        return InvalidArgument("set only one of OXIDE_TOKEN and OXIDE_TOKEN_FILE");
      }
      s.oxide_token = token->second;
    }
    if (s.oxide_host.empty()) {
      return InvalidArgument("missing setting OXIDE_HOST (or --oxide-host): the Oxide API address");
    }
    if (s.oxide_host.rfind("http://", 0) == 0 && !s.oxide_insecure) {
      return Invalid("oxide-host", s.oxide_host +
                                       " is plain http, which would send the token in clear; use "
                                       "https:// (http:// is accepted only with --oxide-insecure)");
    }
    if (s.oxide_project.empty()) {
      return InvalidArgument("missing setting OXIDE_PROJECT (or --oxide-project)");
    }
    if (s.oxide_token.empty()) {
      return InvalidArgument(
          "missing setting OXIDE_TOKEN or OXIDE_TOKEN_FILE: the Oxide API token");
    }
  }
  if (s.ServesNode() && s.volume_attach_limit > 0 && s.reserved_volume_attachments > 0) {
    return Invalid("reserved-volume-attachments",
                   "is subtracted from the computed limit, and --volume-attach-limit sets the "
                   "limit outright; give only one of them");
  }
  if (s.ServesNode()) {
    // The kubernetes source's API server address (in-cluster config); checked here, used at
    // node start.
    if (auto host = env.find("KUBERNETES_SERVICE_HOST"); host != env.end()) {
      s.kubernetes_host = host->second;
    }
    if (auto port = env.find("KUBERNETES_SERVICE_PORT"); port != env.end()) {
      s.kubernetes_port = port->second;
    }
    if (!s.kubernetes_host.empty()) {
      int port = 0;
      if (s.kubernetes_port.empty()) s.kubernetes_port = "443";
      Status st = ParseInt("KUBERNETES_SERVICE_PORT", s.kubernetes_port, 1, 65535, 10, &port);
      if (!st.ok()) {
        return InvalidArgument("invalid KUBERNETES_SERVICE_PORT \"" +
                               CutUtf8(s.kubernetes_port, 128) + "\": not a port number");
      }
      if (s.kubernetes_host.find_first_of("/?#@ ") != std::string::npos) {
        return InvalidArgument("invalid KUBERNETES_SERVICE_HOST \"" +
                               CutUtf8(s.kubernetes_host, 128) + "\": not a host name or address");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kController:
      return "controller";
    case Mode::kNode:
      return "node";
    case Mode::kAll:
      return "all";
  }
  return "all";
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

const char* InstanceIdSourceName(InstanceIdSource source) {
  switch (source) {
    case InstanceIdSource::kEnv:
      return "env";
    case InstanceIdSource::kFile:
      return "file";
    case InstanceIdSource::kKubernetes:
      return "kubernetes";
  }
  return "env";
}

StatusOr<std::vector<InstanceIdSource>> ParseInstanceIdSources(const std::string& list) {
  std::vector<InstanceIdSource> sources;
  if (list.empty()) {
    return InvalidArgument(
        "is empty; list sources among env, file, kubernetes, separated by "
        "commas");
  }
  std::string_view rest = list;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    std::optional<InstanceIdSource> source;
    for (InstanceIdSource known :
         {InstanceIdSource::kEnv, InstanceIdSource::kFile, InstanceIdSource::kKubernetes}) {
      if (name == InstanceIdSourceName(known)) source = known;
    }
    if (name.empty()) {
      return InvalidArgument("\"" + CutUtf8(list, 128) +
                             "\" has an empty entry; list sources among env, file, kubernetes, "
                             "separated by commas");
    }
    if (!source) {
      return InvalidArgument("\"" + CutUtf8(name, 128) +
                             "\" is not a source; the sources are env, file, kubernetes");
    }
    if (std::find(sources.begin(), sources.end(), *source) != sources.end()) {
      return InvalidArgument("\"" + std::string(name) + "\" is listed twice");
    }
    sources.push_back(*source);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return sources;
}

StatusOr<std::string> ReadInstanceMetadataFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    if (error == ENOENT) return NotFound(path + " does not exist");
    return Invalid("instance-metadata-file", "cannot read " + path + ": " + std::strerror(error));
  }
  std::optional<std::string> text = ReadSettingFile(path);
  if (!text) return Invalid("instance-metadata-file", "cannot read " + path);
  if (text->size() > kLargestSettingFile) {
    return Invalid("instance-metadata-file", TooLarge(path));
  }
  return ParseInstanceMetadata(*text, path);
}

StatusOr<std::string> ParseInstanceMetadata(const std::string& text, const std::string& file) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
      value.pop_back();
    }
    if (key == "OXIDE_INSTANCE_ID" || key == "instance_id") {
      if (!IsUuid(value))
        return Invalid("instance-metadata-file", file + ": " + key + " is not a UUID");
      return ToLower(value);
    }
  }
  return Invalid("instance-metadata-file", file + " has no OXIDE_INSTANCE_ID=<uuid> line");
}

StatusOr<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const Environment& env) {
  ParsedCommandLine parsed;
  Settings& s = parsed.settings;

  // Environment first, so that flags override it.
  for (const Option& option : Options()) {
    if (option.env == nullptr) continue;
    auto it = env.find(option.env);
    if (it == env.end() || it->second.empty()) continue;
    Status st = option.apply(s, it->second);
    if (!st.ok()) return Status(st.code(), st.message() + " (from " + option.env + ")");
  }

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.action = ParsedCommandLine::Action::kHelp;
      return parsed;
    }
    if (arg == "--version") {
      parsed.action = ParsedCommandLine::Action::kVersion;
      return parsed;
    }
    if (arg.rfind("--", 0) != 0) {
      return InvalidArgument("unexpected argument \"" + arg + "\" (see --help)");
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "oxide-token") {
      return InvalidArgument(
          "--oxide-token is not accepted: a token on the command line is visible to every user "
          "of the machine; use OXIDE_TOKEN or OXIDE_TOKEN_FILE");
    }
    const Option* option = FindOption(name);
    if (option == nullptr) return InvalidArgument("unknown flag --" + name + " (see --help)");
    if (!has_value && option->value_hint != nullptr) {
      if (i + 1 >= args.size()) return Invalid(option->flag, "needs a value");
      value = args[++i];
    }
    Status st = option->apply(s, value);
    if (!st.ok()) return st;
  }

  Status st = Finish(s, env);
  if (!st.ok()) return st;
  return parsed;
}

std::string HelpText() {
  std::ostringstream out;
  out << "Usage: oxide-csi-plugin [flags]\n\n"
         "Serves the CSI Identity, Controller and Node services for Oxide disks on a unix socket.\n"
         "Flags override environment variables. The Oxide token is read only from OXIDE_TOKEN or\n"
         "OXIDE_TOKEN_FILE and is never printed.\n\nFlags:\n";
  for (const Option& option : Options()) {
    if (option.hidden) continue;
    std::string left = std::string("  --") + option.flag;
    if (option.value_hint != nullptr) left += std::string("=") + option.value_hint;
    out << left << "\n      " << option.help << "\n      default: " << option.default_text;
    if (option.env != nullptr) out << "; environment: " << option.env;
    out << "\n";
  }
  out << "  --help       print this text\n  --version    print the version\n\n"
         "Environment: OXIDE_TOKEN (the Oxide API token; or OXIDE_TOKEN_FILE).\n"
         "KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT (set by Kubernetes in every pod): the\n"
         "API server the kubernetes instance id source reads this node's Node object from, with\n"
         "the pod's service account token and CA.\n";
  return out.str();
}

}  // namespace oxide
