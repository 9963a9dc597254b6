// The plugin's settings: what they are, their defaults, and how they are read from the command
// line and the environment (CSI convention: CSI_ENDPOINT, OXIDE_* variables). Parsing is a pure
// function of the arguments and an environment map (no getenv, no file I/O); it runs once at
// start on the main thread, and the result is immutable afterwards. The options themselves are
// in settings_options.*. Also the value syntaxes the options share (numbers, durations, switches)
// and the one form of a setting's error, "invalid setting --FLAG: why", which the readers of the
// files settings name use too: pure functions, any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/log.h"
#include "util/status.h"

namespace oxide {

enum class Mode { kController, kNode, kAll };
const char* ModeName(Mode mode);

inline constexpr const char* kDefaultDriverName = "csi.oxide.computer";
inline constexpr const char* kDefaultStateDb = "/var/lib/oxide-csi/state.db";
inline constexpr const char* kTopologyKey = "topology.csi.oxide.computer/zone";
inline constexpr const char* kDefaultKubernetesCredentialsDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// Where the node plugin learns which Oxide instance it runs on (node/instance_identity.h).
enum class InstanceIdSource { kEnv, kFile, kKubernetes };
const char* InstanceIdSourceName(InstanceIdSource source);

struct Settings {
  std::string endpoint;     // as given, e.g. unix:///csi/csi.sock
  std::string socket_path;  // the absolute path it names
  mode_t socket_mode = 0660;
  Mode mode = Mode::kAll;
  std::string driver_name = kDefaultDriverName;
  std::string state_db = kDefaultStateDb;
  log::Level log_level = log::Level::kInfo;
  log::Format log_format = log::Format::kText;
  // On SIGTERM/SIGINT: how long calls in flight, then the engines' operations in flight, may take
  // to finish, all together (--shutdown-grace; --shutdown-grace-seconds is the older name).
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(15)};
  // Controller: a clone's temporary snapshot (csi-clone-*) older than this that no unfinished
  // journal entry of this replica names is an orphan and is deleted
  // (engine/clone_snapshot_sweep.h).
  std::chrono::milliseconds clone_snapshot_max_age{std::chrono::minutes(20)};
  // Controller: how long Oxide may fail to answer before the oxide_csi_oxide_api_up gauge reads
  // 0 and an error is logged (0: at once). The flag keeps its old name; Probe no longer uses it.
  std::chrono::milliseconds probe_oxide_grace{std::chrono::seconds(60)};
  int rpc_spin_us = 50;  // how long the loop polls for the next gRPC event before sleeping
  // Hidden (benchmarks): false keeps every finished journal entry, as before issue 22, so the
  // journal-size benchmark can print the figure without the pruner.
  bool journal_prune = true;
  std::string topology_zone = "default";
  // The Prometheus endpoint (--metrics-address); not served unless serve_metrics.
  bool serve_metrics = false;
  std::string metrics_host;
  uint16_t metrics_port = 0;  // 0: any free port

  // Controller: the Oxide API.
  std::string oxide_host;
  std::string oxide_project;
  // OXIDE_TOKEN as given (secret: never logged, never in an error message); empty when the token
  // is in a file.
  std::string oxide_token;
  // OXIDE_TOKEN_FILE (or --oxide-token-file) as given: not read here. The backend reads it at
  // start and re-reads it while the plugin runs, so a rotated token is used without a restart
  // (backend/client_config.h). Empty when the token came from OXIDE_TOKEN.
  std::string oxide_token_file;
  bool oxide_token_file_from_env = false;  // named by OXIDE_TOKEN_FILE, not the flag (for errors)
  std::string oxide_ca_file;               // as given: checked for reading at start by the backend
  bool oxide_insecure = false;
  int default_volume_size_gib = 10;  // CreateVolume without a capacity range
  // The newest CSI minor version whose capabilities ControllerGetCapabilities lists (10 or 12):
  // clients built from an older spec may reject a capability they do not know.
  int advertised_csi_minor = 12;

  // Node: the Oxide instance this node runs on, from the first of `instance_id_sources` that
  // answers (resolved at node start, not here: parsing reads no file and asks no server).
  std::vector<InstanceIdSource> instance_id_sources = {
      InstanceIdSource::kEnv, InstanceIdSource::kFile, InstanceIdSource::kKubernetes};
  std::string instance_id;             // env: OXIDE_INSTANCE_ID / --instance-id (lowercased)
  std::string instance_metadata_file;  // file: read at node start
  // kubernetes: this node's Node object, read with the pod's service account.
  std::string node_name;        // NODE_NAME (downward API spec.nodeName)
  std::string kubernetes_host;  // KUBERNETES_SERVICE_HOST; empty = not in a cluster
  std::string kubernetes_port;  // KUBERNETES_SERVICE_PORT
  std::string kubernetes_credentials_dir = kDefaultKubernetesCredentialsDir;  // token, ca.crt
  // Wait for the Node's spec.providerID rather than take "name:<node name>", even without the
  // cloud controller manager's uninitialized taint (which makes the node wait anyway).
  bool wait_for_provider_id = false;
  int kubernetes_timeout_seconds = 10;  // connect and whole-exchange limit per attempt
  // Once serving (and registered: the CSINode lists the driver), take the startup taint
  // csi.oxide.computer/agent-not-ready off this node's Node (needs NODE_NAME, in a cluster).
  bool remove_startup_taint = true;
  std::string sysfs_root = "/sys";  // where block devices and their NVMe serials are read
  int device_wait_seconds = 60;     // how long NodeStageVolume waits for the device to appear
  // Node: NodeGetInfo's max_volumes_per_node. --volume-attach-limit sets it (0: computed);
  // computed, it is 12 (Oxide's disks per instance, boot disk included) minus the NVMe disks the
  // plugin does not manage minus --reserved-volume-attachments.
  int volume_attach_limit = 0;
  int reserved_volume_attachments = 0;
  int mkfs_timeout_seconds = 600;    // one mkfs run, killed with its process group on expiry
  int fsck_timeout_seconds = 600;    // fsck before a mount (a repair may take long)
  int command_timeout_seconds = 60;  // blkid, tune2fs, xfs_db
  int max_concurrent_formats = 2;    // mkfs runs at once; more wait their turn
  // The feature set mkfs.xfs is pinned to: a built-in profile named after xfsprogs' LTS config
  // files (lts_4.19, lts_5.4, lts_5.10, lts_5.15, lts_6.1), "none" (mkfs.xfs's own defaults) or
  // the absolute path of an mkfs.xfs config file. See node/filesystem_options.h.
  std::string xfs_feature_profile = "lts_5.4";

  bool ServesController() const { return mode != Mode::kNode; }
  bool ServesNode() const { return mode != Mode::kController; }
};

// The environment the parser reads, as a map: ProcessEnvironment() in main, any map in tests.
using Environment = std::map<std::string, std::string>;
Environment ProcessEnvironment();  // this process's environment (environ)

struct ParsedCommandLine {
  enum class Action { kRun, kHelp, kVersion } action = Action::kRun;
  Settings settings;
};

// Reads flags (`--name=value` or `--name value`) over the environment; flags win. Every problem
// is an INVALID_ARGUMENT naming the setting, without echoing secret values. Pure: `env` is the
// only environment it sees, and it reads no file (the files settings name are read where they
// are used: the token file by the backend, the instance metadata file at node start).
StatusOr<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const Environment& env);

// A comma-separated, ordered list of instance id sources ("env,file,kubernetes"); an empty entry,
// an unknown name or a name listed twice is INVALID_ARGUMENT.
StatusOr<std::vector<InstanceIdSource>> ParseInstanceIdSources(const std::string& list);

std::string HelpText();

// The value syntaxes the options share, and the one form of their error.

// INVALID_ARGUMENT "invalid setting --<flag>: <why>"; `flag` is written without the "--".
Status InvalidSetting(const char* flag, const std::string& why);

// A whole number in `base` between `min` and `max`; anything else is refused, naming `flag`.
Status ParseInt(const char* flag, const std::string& text, int min, int max, int base, int* out);

// A duration: a whole number with a unit, ms, s, m or h ("500ms", "60s", "2m"); "0" alone is
// zero. At most `max`.
Status ParseDuration(const char* flag, const std::string& text, std::chrono::milliseconds max,
                     std::chrono::milliseconds* out);

// true/1/empty (a bare switch) or false/0.
Status ParseBool(const char* flag, const std::string& text, bool* out);

}  // namespace oxide
