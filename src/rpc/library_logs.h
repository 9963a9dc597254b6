// Routes the log output of the libraries the plugin links — libprotobuf (GOOGLE_LOG) and gRPC
// core (gpr_log) — through util/log, so that with --log-format=json every stderr line is one JSON
// object. Their records carry source=protobuf|grpc and the library's file:line.
// InstallLibraryLogRouting: once at start, before any gRPC server, channel or thread exists
// (libprotobuf's SetLogHandler is not thread-safe). ProtobufErrorCapture: any thread, for the
// thread that creates it.
#pragma once

#include <string>

namespace oxide::rpc {

void InstallLibraryLogRouting();

// While one is alive on a thread, libprotobuf's messages logged by that thread are kept here
// instead of being written (e.g. "String field 'csi.v1.CreateVolumeRequest.name' contains
// invalid UTF-8 data when parsing a protocol buffer…" during a parse), so that the caller can put
// them in its own answer and record. Not nestable.
class ProtobufErrorCapture {
 public:
  ProtobufErrorCapture();
  ~ProtobufErrorCapture();
  ProtobufErrorCapture(const ProtobufErrorCapture&) = delete;
  ProtobufErrorCapture& operator=(const ProtobufErrorCapture&) = delete;

  // The captured messages, joined by "; " ("" when libprotobuf said nothing).
  const std::string& text() const { return text_; }

  // Used by the log handler: adds `message` to this thread's capture, false when there is none.
  static bool Offer(const std::string& message);

 private:
  std::string text_;
};

}  // namespace oxide::rpc
