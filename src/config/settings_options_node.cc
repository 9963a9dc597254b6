// The node's options: how it learns its Oxide instance, the Kubernetes API server it asks, and
// how it finds devices, runs commands and counts attachments (settings_options.h).
#include "config/option_values.h"
#include "config/settings_options.h"
#include "config/validation.h"
#include "util/utf8_cut.h"

namespace oxide::settings_options {

// instance-id, instance-metadata-file (read at node start), instance-id-source.
Options InstanceIdOptions() {
  return {
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
  };
}

// node-name, wait-for-provider-id, remove-startup-taint, kubernetes-*.
Options KubernetesOptions() {
  return {
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
           return InvalidSetting("kubernetes-credentials-dir", "\"" + v + "\" is not absolute");
         }
         s.kubernetes_credentials_dir = v;
         return Status::Ok();
       },
       true},
  };
}

// sysfs-root, device-wait-seconds, the command time limits, max-concurrent-formats.
Options NodeCommandOptions() {
  return {
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
  };
}

// xfs-feature-profile, volume-attach-limit (and its older name), reserved-volume-attachments.
Options NodeVolumeOptions() {
  return {
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
}

}  // namespace oxide::settings_options
