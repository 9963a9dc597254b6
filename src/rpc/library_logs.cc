#include "rpc/library_logs.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include <string>

#include "util/log.h"

namespace oxide::rpc {
namespace {

thread_local ProtobufErrorCapture* t_capture = nullptr;

std::string Where(const char* file, int line) {
  if (file == nullptr) return "";
  return std::string(file) + ":" + std::to_string(line);
}

// libprotobuf: INFO → info, WARNING → warn, ERROR and FATAL → error (FATAL aborts afterwards).
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  if (level < google::protobuf::LOGLEVEL_FATAL && ProtobufErrorCapture::Offer(message)) return;
  log::Level ours = log::Level::kError;
  if (level == google::protobuf::LOGLEVEL_INFO) ours = log::Level::kInfo;
  if (level == google::protobuf::LOGLEVEL_WARNING) ours = log::Level::kWarn;
  if (!log::Enabled(ours)) return;
  log::Write(ours, message, {{"source", "protobuf"}, {"where", Where(file, line)}});
}

// gRPC core: DEBUG → debug, INFO → info, ERROR → error. gRPC filters by GRPC_VERBOSITY (default
// ERROR) before calling this.
void GrpcLog(gpr_log_func_args* args) {
  log::Level ours = log::Level::kError;
  if (args->severity == GPR_LOG_SEVERITY_DEBUG) ours = log::Level::kDebug;
  if (args->severity == GPR_LOG_SEVERITY_INFO) ours = log::Level::kInfo;
  if (!log::Enabled(ours)) return;
  log::Write(ours, args->message != nullptr ? args->message : "",
             {{"source", "grpc"}, {"where", Where(args->file, args->line)}});
}

}  // namespace

void InstallLibraryLogRouting() {
  google::protobuf::SetLogHandler(&ProtobufLog);
  gpr_set_log_function(&GrpcLog);
}

ProtobufErrorCapture::ProtobufErrorCapture() {
  t_capture = this;
}

ProtobufErrorCapture::~ProtobufErrorCapture() {
  t_capture = nullptr;
}

bool ProtobufErrorCapture::Offer(const std::string& message) {
  if (t_capture == nullptr) return false;
  std::string& text = t_capture->text_;
  if (!text.empty()) text += "; ";
  text += message;
  return true;
}

}  // namespace oxide::rpc
