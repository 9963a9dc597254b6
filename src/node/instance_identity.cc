#include "node/instance_identity.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>

#include "config/validation.h"
#include "node/instance_metadata.h"
#include "util/setting_file.h"
#include "util/utf8_cut.h"

namespace oxide::node {
namespace {

constexpr std::string_view kOxideProviderPrefix = "oxide://";

// One source's answer: a node id, or why it has none (`skipped`: it is not configured here), or
// (kubernetes) a Node whose spec.providerID is still to come (`awaited`).
struct SourceAnswer {
  std::optional<std::string> node_id;
  std::string why;
  bool skipped = false;
  std::optional<KubernetesNode> awaited;
};

SourceAnswer Answered(std::string node_id) {
  return {.node_id = std::move(node_id), .why = "", .skipped = false, .awaited = std::nullopt};
}
SourceAnswer Skipped(std::string why) {
  return {.node_id = std::nullopt, .why = "skipped: " + why, .skipped = true, .awaited = {}};
}
SourceAnswer Failed(std::string why) {
  return {.node_id = std::nullopt, .why = std::move(why), .skipped = false, .awaited = {}};
}
SourceAnswer Awaited(KubernetesNode node) {
  return {.node_id = std::nullopt, .why = "", .skipped = false, .awaited = std::move(node)};
}

SourceAnswer FromEnvironment(const Settings& settings) {
  // ParseCommandLine has checked that it is a UUID and lowercased it.
  if (settings.instance_id.empty()) return Skipped("OXIDE_INSTANCE_ID is not set");
  return Answered(settings.instance_id);
}

SourceAnswer FromFile(const Settings& settings) {
  if (settings.instance_metadata_file.empty()) return Skipped("no --instance-metadata-file");
  StatusOr<std::string> id = ReadInstanceMetadataFile(settings.instance_metadata_file);
  if (id.ok()) return Answered(*id);
  if (id.status().code() == StatusCode::kNotFound) return Skipped(id.status().message());
  return Failed(id.status().message());
}

SourceAnswer FromKubernetes(const Settings& settings) {
  if (settings.node_name.empty()) return Skipped("NODE_NAME is not set");
  if (settings.kubernetes_host.empty()) {
    return Skipped("not in a Kubernetes cluster (KUBERNETES_SERVICE_HOST is not set)");
  }
  StatusOr<KubernetesNode> node =
      ReadKubernetesNode(KubernetesOptionsFromSettings(settings), settings.node_name);
  if (!node.ok()) return Failed(node.status().message());
  if (MustWaitForProviderId(*node, settings.wait_for_provider_id)) return Awaited(*node);
  StatusOr<std::string> id = NodeIdFromKubernetesNode(node->provider_id, settings.node_name);
  if (!id.ok()) return Failed(id.status().message());
  return Answered(*id);
}

SourceAnswer Ask(InstanceIdSource source, const Settings& settings) {
  switch (source) {
    case InstanceIdSource::kEnv:
      return FromEnvironment(settings);
    case InstanceIdSource::kFile:
      return FromFile(settings);
    case InstanceIdSource::kKubernetes:
      return FromKubernetes(settings);
  }
  return Failed("unknown source");
}

}  // namespace

KubernetesApiOptions KubernetesOptionsFromSettings(const Settings& settings) {
  KubernetesApiOptions options;
  options.host = settings.kubernetes_host;
  options.port = settings.kubernetes_port;
  options.credentials_dir = settings.kubernetes_credentials_dir;
  options.connect_timeout = std::chrono::seconds(settings.kubernetes_timeout_seconds);
  options.total_timeout = std::chrono::seconds(settings.kubernetes_timeout_seconds);
  return options;
}

StatusOr<std::string> ReadInstanceMetadataFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    if (error == ENOENT) return NotFound(path + " does not exist");
    return InvalidSetting("instance-metadata-file",
                          "cannot read " + path + ": " + std::strerror(error));
  }
  std::optional<std::string> text = ReadSettingFile(path);
  if (!text) return InvalidSetting("instance-metadata-file", "cannot read " + path);
  if (text->size() > kLargestSettingFile) {
    return InvalidSetting("instance-metadata-file", SettingFileTooLarge(path));
  }
  return ParseInstanceMetadata(*text, path);
}

bool MustWaitForProviderId(const KubernetesNode& node, bool wait_for_provider_id) {
  return node.provider_id.empty() && (node.uninitialized || wait_for_provider_id);
}

StatusOr<std::string> NodeIdFromKubernetesNode(const std::string& provider_id,
                                               const std::string& node_name) {
  if (provider_id.empty()) {
    std::string problem = OxideNameProblem(node_name);
    if (!problem.empty()) {
      return FailedPrecondition("Node " + node_name +
                                " has no spec.providerID, and its name cannot be an Oxide "
                                "instance name (" +
                                problem + ")");
    }
    return NodeIdForInstanceName(node_name);
  }
  std::string_view id = provider_id;
  if (id.substr(0, kOxideProviderPrefix.size()) != kOxideProviderPrefix ||
      !IsUuid(id.substr(kOxideProviderPrefix.size()))) {
    return FailedPrecondition("Node " + node_name + " has spec.providerID \"" +
                              CutUtf8(provider_id, 128) +
                              "\", which is not oxide://<instance uuid> (is the Oxide "
                              "cloud-controller-manager running?)");
  }
  return ToLower(id.substr(kOxideProviderPrefix.size()));
}

StatusOr<NodeIdentity> ResolveNodeIdentity(const Settings& settings) {
  std::string tried;
  std::string failures;
  for (InstanceIdSource source : settings.instance_id_sources) {
    SourceAnswer answer = Ask(source, settings);
    const std::string name = InstanceIdSourceName(source);
    if (answer.node_id) {
      return NodeIdentity{.node_id = *answer.node_id,
                          .source = name,
                          .earlier_failures = failures,
                          .awaits_provider_id = false,
                          .node = {}};
    }
    if (answer.awaited) {
      return NodeIdentity{.node_id = "",
                          .source = name,
                          .earlier_failures = failures,
                          .awaits_provider_id = true,
                          .node = *answer.awaited};
    }
    const std::string said = name + ": " + answer.why;
    tried += (tried.empty() ? "" : "; ") + said;
    if (!answer.skipped) failures += (failures.empty() ? "" : "; ") + said;
  }
  return FailedPrecondition("no Oxide instance id: " + tried);
}

}  // namespace oxide::node
