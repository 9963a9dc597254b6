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

}  // namespace oxide::settings_options
