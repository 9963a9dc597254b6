#include "cli/cli_context.h"

#include <google/protobuf/util/json_util.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "util/status.h"

namespace oxide::cli {
namespace {

// gRPC's codes are the plugin's StatusCode values (util/status.h).
const char* CodeName(grpc::StatusCode code) {
  return StatusCodeName(static_cast<StatusCode>(code));
}

std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

bool FieldCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The CSI fields `verb` fills, each with the flag (or <argument>) a person typed for it; longest
// field first so "staging_target_path" wins over "target_path".
std::vector<std::pair<std::string, std::string>> FieldNames(const VerbSpec& verb) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const FlagSpec& flag : verb.flags) {
    if (!flag.field.empty()) names.emplace_back(flag.field, "--" + flag.name);
  }
  for (const PositionalSpec& positional : verb.positionals) {
    if (!positional.field.empty())
      names.emplace_back(positional.field, "<" + positional.name + ">");
  }
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return names;
}

}  // namespace

std::string FieldsToFlags(const std::string& message, const VerbSpec& verb) {
  const auto names = FieldNames(verb);
  std::string out;
  std::vector<std::string> replaced;
  size_t i = 0;
  while (i < message.size()) {
    bool at_word_start = i == 0 || (!FieldCharacter(message[i - 1]) && message[i - 1] != '.');
    bool matched = false;
    for (const auto& [field, flag] : names) {
      if (!at_word_start || message.compare(i, field.size(), field) != 0) continue;
      size_t end = i + field.size();
      if (end < message.size() && FieldCharacter(message[end])) continue;
      out += flag;
      if (std::find(replaced.begin(), replaced.end(), field) == replaced.end()) {
        replaced.push_back(field);
      }
      i = end;
      matched = true;
      break;
    }
    if (!matched) out += message[i++];
  }
  if (replaced.empty()) return message;
  std::string fields;
  for (const std::string& field : replaced)
    fields += (fields.empty() ? "" : ", ") + field;
  return out + " (" + fields + ")";
}

std::string UnreachableReason(const std::string& socket_path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot make a socket: ") + std::strerror(errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(address.sun_path)) {
    close(fd);
    return "the socket path is too long for a unix socket";
  }
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int result = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  int error = errno;
  close(fd);
  if (result == 0) return "";
  switch (error) {
    case ENOENT:
      return "no socket there (" + std::string(std::strerror(error)) + ")";
    case ECONNREFUSED:
      return "nothing is listening on the socket (" + std::string(std::strerror(error)) + ")";
    case EACCES:
    case EPERM:
      return "permission denied (" + std::string(std::strerror(error)) +
             "; the socket or its directory is not open to this user)";
    case ENOTSOCK:
      return "the path is not a socket (" + std::string(std::strerror(error)) + ")";
    default:
      return std::strerror(error);
  }
}

std::unique_ptr<grpc::ClientContext> CliContext::NewCall() const {
  auto call = std::make_unique<grpc::ClientContext>();
  call->set_deadline(std::chrono::system_clock::now() + timeout);
  return call;
}

int ReportRpcError(const CliContext& context, const grpc::Status& status) {
  std::string message = status.error_message();
  bool unreachable = false;
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE && !context.socket_path.empty()) {
    std::string reason = UnreachableReason(context.socket_path);
    if (!reason.empty()) {
      const std::string where = "unix://" + context.socket_path;
      message = "cannot reach the plugin at " + where + ": " + reason +
                "; is the plugin running and serving " + where + "?";
      unreachable = true;
    }
  } else if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && context.verb) {
    message = FieldsToFlags(message, *context.verb);
  }
  if (context.output == OutputFormat::kJson) {
    std::printf("{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", CodeName(status.error_code()),
                JsonEscape(message).c_str());
  } else if (unreachable) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
  } else {
    std::fprintf(stderr, "error: %s: %s\n", CodeName(status.error_code()), message.c_str());
  }
  return kExitRpcError;
}

void PrintJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  const auto printed = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!printed.ok()) {
    std::cerr << "error: cannot print the answer as JSON: " << printed.ToString() << "\n";
    return;
  }
  std::cout << json << "\n";
}

void PrintFields(const std::vector<std::pair<std::string, std::string>>& fields) {
  size_t width = 0;
  for (const auto& field : fields)
    width = std::max(width, field.first.size());
  for (const auto& [key, value] : fields) {
    std::cout << key << ":" << std::string(width - key.size() + 1, ' ') << value << "\n";
  }
}

}  // namespace oxide::cli
