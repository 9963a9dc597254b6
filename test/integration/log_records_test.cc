// The plugin's log as a collector reads it (docs/logging.md): the real plugin with
// --log-format=json against the real oxide-sim through a mixed run — successes, a caller error,
// an Oxide 500, a 401 (a token Oxide rejects), a CreateVolume whose name is not UTF-8 sent as raw
// bytes, and SIGTERM with calls in flight cut off by a short grace — then EVERY stderr line must
// be one JSON object, and the call records must carry the right levels and fields.
// gtest main thread (plus one client thread per in-flight call).
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "controller_fixture.h"
#include "support/wait_until.h"
#include "util/status.h"

namespace oxide::testing {
namespace {

using Json = nlohmann::json;

bool IsUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

class LogRecordsTest : public ControllerTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    return {"--log-format=json", "--shutdown-grace-seconds=1"};
  }

  void SetSimTokens(const std::vector<std::string>& tokens) {
    sim_test::Reply reply = api_->post("/__sim/auth/tokens", {{"tokens", tokens}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }

  // Every line of the log, each parsed as JSON (the test fails on a line that is not).
  static std::vector<Json> Records(const std::string& log) {
    std::vector<Json> records;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
      Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      EXPECT_TRUE(record.is_object()) << "not one JSON object: " << line;
      if (record.is_object()) records.push_back(std::move(record));
    }
    return records;
  }

  // The call records ("rpc ok"/"rpc failed") of `method` for which `match` holds.
  static std::vector<Json> CallRecords(const std::vector<Json>& records, const std::string& method,
                                       const std::function<bool(const Json&)>& match) {
    std::vector<Json> found;
    for (const Json& r : records) {
      const std::string msg = r.value("msg", "");
      if ((msg == "rpc ok" || msg == "rpc failed") && r.value("method", "") == method && match(r)) {
        found.push_back(r);
      }
    }
    return found;
  }
};

TEST_F(LogRecordsTest, EveryLineIsJsonAndCallRecordsCarryLevelsAndFields) {
  // A success: CreateVolume carries the CO's name and the new volume id.
  csi::v1::Volume volume = MustCreate("pvc-logs-ok");
  ASSERT_TRUE(IsUuid(volume.volume_id())) << volume.volume_id();

  // A caller error: no name.
  ExpectCode(Create(CreateRequest("")), grpc::StatusCode::INVALID_ARGUMENT);

  // An Oxide 500 (not retried): UNAVAILABLE for the CO, which retries.
  SetSimFaults({{{"operation", "*"}, {"error_500", 1.0}}});
  ExpectCode(Delete(volume.volume_id()), grpc::StatusCode::UNAVAILABLE);
  SetSimFaults(Json::array());

  // A token Oxide rejects: UNAUTHENTICATED, an operator must fix it.
  SetSimTokens({"oxide-token-someone-else"});
  ExpectCode(Delete(volume.volume_id()), grpc::StatusCode::UNAUTHENTICATED);
  SetSimTokens({sim_test::SimProcess::kToken});

  // CreateVolumeRequest{name: "\xff"}: field 1, length 1, a byte that is never UTF-8.
  grpc::Status not_utf8 =
      SendBytes("/csi.v1.Controller/CreateVolume", std::string("\x0a\x01\xff", 3));
  ExpectCode(not_utf8, grpc::StatusCode::INVALID_ARGUMENT,
             "the request is not a valid csi.v1.CreateVolumeRequest: ");
  ExpectCode(not_utf8, grpc::StatusCode::INVALID_ARGUMENT, "invalid UTF-8");

  // Calls in flight at SIGTERM, cut off by a 1 s grace: Oxide answers their creates after 3 s
  // (short enough for the simulator to have answered them all when it is stopped).
  SetSimFaults({{{"operation", "disk_create"}, {"latency_ms", 3000}}});
  constexpr int kInFlight = 3;
  std::vector<grpc::Status> cut(kInFlight);
  std::vector<std::thread> clients;
  for (int i = 0; i < kInFlight; ++i) {
    clients.emplace_back([this, i, &cut] {
      csi::v1::CreateVolumeResponse response;
      cut[i] =
          controller_->CreateVolume(Call(std::chrono::seconds(60)).get(),
                                    CreateRequest("pvc-logs-cut-" + std::to_string(i)), &response);
    });
  }
  EXPECT_TRUE(WaitUntil([&] { return CountSimRequests("POST", "disk_create") >= 1 + kInFlight; },
                        std::chrono::seconds(20)));
  plugin_->Signal(SIGTERM);
  for (std::thread& client : clients)
    client.join();
  EXPECT_EQ(plugin_->WaitExit(), 0);
  const std::string log = plugin_->Log();
  plugin_.reset();

  const std::vector<Json> records = Records(log);
  ASSERT_FALSE(records.empty());
  for (const Json& r : records) {
    if (r.contains("duration_ms")) {
      EXPECT_TRUE(r["duration_ms"].is_number()) << r.dump();
    }
    if (r.contains("volume_id")) {
      EXPECT_TRUE(IsUuid(r["volume_id"].get<std::string>())) << r.dump();
    }
    if (r.value("msg", "") == "rpc ok" || r.value("msg", "") == "rpc failed") {
      EXPECT_TRUE(r.contains("method") && r.contains("code")) << r.dump();
      EXPECT_FALSE(r.contains("rpc")) << r.dump();
      EXPECT_TRUE(r["delivered"].is_boolean()) << r.dump();
    }
  }

  auto created = CallRecords(records, "CreateVolume", [](const Json& r) {
    return r.value("volume_name", "") == "pvc-logs-ok";
  });
  ASSERT_EQ(created.size(), 1u) << log;
  EXPECT_EQ(created[0]["level"], "info");
  EXPECT_EQ(created[0]["code"], "OK");
  EXPECT_EQ(created[0]["volume_id"], volume.volume_id());

  auto caller_error = CallRecords(records, "CreateVolume", [](const Json& r) {
    return r.value("code", "") == "INVALID_ARGUMENT" && !r.contains("volume_name");
  });
  ASSERT_EQ(caller_error.size(), 2u) << log;  // the missing name and the bytes that are not UTF-8
  for (const Json& r : caller_error)
    EXPECT_EQ(r["level"], "warn") << r.dump();
  EXPECT_EQ(CallRecords(records, "CreateVolume",
                        [](const Json& r) {
                          return r.value("error", "").find("csi.v1.CreateVolumeRequest") !=
                                 std::string::npos;
                        })
                .size(),
            1u)
      << log;

  auto oxide_500 = CallRecords(records, "DeleteVolume",
                               [](const Json& r) { return r.value("code", "") == "UNAVAILABLE"; });
  ASSERT_EQ(oxide_500.size(), 1u) << log;
  EXPECT_EQ(oxide_500[0]["level"], "warn");
  EXPECT_EQ(oxide_500[0]["volume_id"], volume.volume_id());
  EXPECT_TRUE(IsUuid(oxide_500[0].value("oxide_request_id", ""))) << oxide_500[0].dump();
  EXPECT_FALSE(oxide_500[0].value("oxide_operation", "").empty()) << oxide_500[0].dump();

  auto unauthenticated = CallRecords(records, "DeleteVolume", [](const Json& r) {
    return r.value("code", "") == "UNAUTHENTICATED";
  });
  ASSERT_EQ(unauthenticated.size(), 1u) << log;
  EXPECT_EQ(unauthenticated[0]["level"], "error");
  EXPECT_TRUE(IsUuid(unauthenticated[0].value("oxide_request_id", "")))
      << unauthenticated[0].dump();
  EXPECT_FALSE(unauthenticated[0].value("oxide_operation", "").empty());

  for (int i = 0; i < kInFlight; ++i) {
    const std::string name = "pvc-logs-cut-" + std::to_string(i);
    auto record = CallRecords(records, "CreateVolume",
                              [&](const Json& r) { return r.value("volume_name", "") == name; });
    ASSERT_EQ(record.size(), 1u) << name << "\n" << log;
    // What a real client sees when the grace ends: gRPC's shutdown cancels the call UNAVAILABLE.
    EXPECT_EQ(cut[i].error_code(), grpc::StatusCode::UNAVAILABLE) << cut[i].error_message();
    // The record says what the caller saw, not what the plugin meant to answer.
    EXPECT_EQ(record[0]["code"], StatusCodeName(static_cast<StatusCode>(cut[i].error_code())))
        << record[0].dump() << "\nthe client saw: " << cut[i].error_code() << " "
        << cut[i].error_message();
    EXPECT_EQ(record[0]["level"], "warn") << record[0].dump();
    EXPECT_EQ(record[0]["delivered"], false) << record[0].dump();
    EXPECT_EQ(record[0].value("error", "").find("dropped this call"), std::string::npos);
  }
}

}  // namespace
}  // namespace oxide::testing
