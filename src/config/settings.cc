#include "config/settings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string_view>

#include "config/settings_options.h"
#include "config/validation.h"
#include "util/utf8_cut.h"

extern char** environ;

namespace oxide {
namespace {

using settings_options::Option;

Status FinishController(Settings& s, const Environment& env) {
  auto token = env.find("OXIDE_TOKEN");
  if (token != env.end() && !token->second.empty()) {
    if (!s.oxide_token_file.empty()) {
      return InvalidArgument("set only one of OXIDE_TOKEN and OXIDE_TOKEN_FILE");
    }
    s.oxide_token = token->second;
  }
  if (s.oxide_host.empty()) {
    return InvalidArgument("missing setting OXIDE_HOST (or --oxide-host): the Oxide API address");
  }
  if (s.oxide_host.rfind("http://", 0) == 0 && !s.oxide_insecure) {
    return InvalidSetting("oxide-host", s.oxide_host +
                                            " is plain http, which would send the token in clear; "
                                            "use https:// (http:// is accepted only with "
                                            "--oxide-insecure)");
  }
  if (s.oxide_project.empty()) {
    return InvalidArgument("missing setting OXIDE_PROJECT (or --oxide-project)");
  }
  // The token file is read at start by the backend (backend/client_config.h).
  if (s.oxide_token.empty() && s.oxide_token_file.empty()) {
    return InvalidArgument("missing setting OXIDE_TOKEN or OXIDE_TOKEN_FILE: the Oxide API token");
  }
  return Status::Ok();
}

Status FinishNode(Settings& s, const Environment& env) {
  if (s.volume_attach_limit > 0 && s.reserved_volume_attachments > 0) {
    return InvalidSetting("reserved-volume-attachments",
                          "is subtracted from the computed limit, and --volume-attach-limit sets "
                          "the limit outright; give only one of them");
  }
  // The kubernetes source's API server address (in-cluster config); checked here, used at node
  // start.
  if (auto host = env.find("KUBERNETES_SERVICE_HOST"); host != env.end()) {
    s.kubernetes_host = host->second;
  }
  if (auto port = env.find("KUBERNETES_SERVICE_PORT"); port != env.end()) {
    s.kubernetes_port = port->second;
  }
  if (s.kubernetes_host.empty()) return Status::Ok();
  int port = 0;
  if (s.kubernetes_port.empty()) s.kubernetes_port = "443";
  Status st = ParseInt("KUBERNETES_SERVICE_PORT", s.kubernetes_port, 1, 65535, 10, &port);
  if (!st.ok()) {
    return InvalidArgument("invalid KUBERNETES_SERVICE_PORT \"" + CutUtf8(s.kubernetes_port, 128) +
                           "\": not a port number");
  }
  if (s.kubernetes_host.find_first_of("/?#@ ") != std::string::npos) {
    return InvalidArgument("invalid KUBERNETES_SERVICE_HOST \"" + CutUtf8(s.kubernetes_host, 128) +
                           "\": not a host name or address");
  }
  return Status::Ok();
}

Status Finish(Settings& s, const Environment& env) {
  if (s.socket_path.empty()) {
    return InvalidArgument("missing setting --endpoint (or CSI_ENDPOINT): the CSI socket to serve");
  }
  if (ParentDirectory(s.state_db) == ParentDirectory(s.socket_path)) {
    return InvalidSetting("state-db", s.state_db +
                                          " is in the socket's directory; the CSI spec reserves "
                                          "that directory for the socket, so put the database "
                                          "elsewhere");
  }
  if (s.ServesController()) {
    Status st = FinishController(s, env);
    if (!st.ok()) return st;
  }
  if (s.ServesNode()) return FinishNode(s, env);
  return Status::Ok();
}

// The environment's settings, before the flags (which override them).
Status ApplyEnvironment(Settings& s, const Environment& env) {
  for (const Option& option : settings_options::All()) {
    if (option.env == nullptr) continue;
    auto it = env.find(option.env);
    if (it == env.end() || it->second.empty()) continue;
    Status st = option.apply(s, it->second);
    if (!st.ok()) return Status(st.code(), st.message() + " (from " + option.env + ")");
  }
  // Only the variable can have named it so far; a --oxide-token-file flag clears the mark.
  s.oxide_token_file_from_env = !s.oxide_token_file.empty();
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

StatusOr<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const Environment& env) {
  ParsedCommandLine parsed;
  Settings& s = parsed.settings;
  Status from_env = ApplyEnvironment(s, env);
  if (!from_env.ok()) return from_env;

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
    const Option* option = settings_options::Find(name);
    if (option == nullptr) return InvalidArgument("unknown flag --" + name + " (see --help)");
    if (!has_value && option->value_hint != nullptr) {
      if (i + 1 >= args.size()) return InvalidSetting(option->flag, "needs a value");
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
  for (const Option& option : settings_options::All()) {
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

Status InvalidSetting(const char* flag, const std::string& why) {
  return InvalidArgument(std::string("invalid setting --") + flag + ": " + why);
}

Status ParseInt(const char* flag, const std::string& text, int min, int max, int base, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return InvalidSetting(flag, "\"" + text + "\" is not a number between " + std::to_string(min) +
                                    " and " + std::to_string(max));
  }
  *out = value;
  return Status::Ok();
}

Status ParseDuration(const char* flag, const std::string& text, std::chrono::milliseconds max,
                     std::chrono::milliseconds* out) {
  const Status bad = InvalidSetting(
      flag, "\"" + text + "\" is not a duration such as 500ms, 60s, 2m or 1h (at most " +
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
    return InvalidSetting(flag, "\"" + text + "\" is not true or false");
  return Status::Ok();
}

}  // namespace oxide
