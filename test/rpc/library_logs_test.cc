// libprotobuf's and gRPC core's own log messages, routed through util/log (rpc/library_logs.h):
// with the JSON format each becomes one JSON record with source=protobuf|grpc and a mapped level;
// a ProtobufErrorCapture keeps this thread's protobuf messages out of the log.
#include "rpc/library_logs.h"

#include <fcntl.h>
#include <google/protobuf/stubs/logging.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "csi.pb.h"
#include "support/temp_dir.h"
#include "util/log.h"

namespace oxide::rpc {
namespace {

class LibraryLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    log::SetOutputFd(fd_);
    log::Configure(log::Level::kInfo, log::Format::kJson);
    InstallLibraryLogRouting();
  }
  void TearDown() override {
    log::SetOutputFd(STDERR_FILENO);
    log::Configure(log::Level::kInfo, log::Format::kText);
    close(fd_);
  }
  std::vector<nlohmann::json> Records() {
    std::istringstream in(testing::ReadFile(dir_.File("log")));
    std::vector<nlohmann::json> records;
    for (std::string line; std::getline(in, line);) {
      auto record = nlohmann::json::parse(line, nullptr, false);
      EXPECT_TRUE(record.is_object()) << "not JSON: " << line;
      records.push_back(record);
    }
    return records;
  }
  testing::TempDir dir_;
  int fd_ = -1;
};

TEST_F(LibraryLogsTest, ProtobufMessagesBecomeRecords) {
  GOOGLE_LOG(ERROR) << "a protobuf error";
  GOOGLE_LOG(WARNING) << "a protobuf warning";
  auto records = Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["msg"], "a protobuf error");
  EXPECT_EQ(records[0]["level"], "error");
  EXPECT_EQ(records[0]["source"], "protobuf");
  EXPECT_NE(records[0].value("where", "").find("library_logs_test.cc:"), std::string::npos);
  EXPECT_EQ(records[1]["level"], "warn");
}

TEST_F(LibraryLogsTest, GrpcMessagesBecomeRecords) {
  grpc_init();  // sets gRPC's verbosity (GRPC_VERBOSITY, default ERROR): before it, gpr_log is mute
  gpr_log(GPR_ERROR, "a grpc error %d", 42);
  gpr_log(GPR_DEBUG, "below GRPC_VERBOSITY: filtered by gRPC");
  grpc_shutdown();
  auto records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["msg"], "a grpc error 42");
  EXPECT_EQ(records[0]["level"], "error");
  EXPECT_EQ(records[0]["source"], "grpc");
}

TEST_F(LibraryLogsTest, ACaptureKeepsAParseFailureReasonOutOfTheLog) {
  csi::v1::CreateVolumeRequest request;
  std::string reason;
  {
    ProtobufErrorCapture capture;
    EXPECT_FALSE(request.ParseFromString(std::string("\x0a\x01\xff", 3)));
    reason = capture.text();
  }
  EXPECT_NE(reason.find("String field 'csi.v1.CreateVolumeRequest.name' contains invalid UTF-8"),
            std::string::npos)
      << reason;
  EXPECT_TRUE(Records().empty());
  GOOGLE_LOG(ERROR) << "after the capture";
  EXPECT_EQ(Records().size(), 1u);
}

}  // namespace
}  // namespace oxide::rpc
