#include "controller_fixture.h"

#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/byte_buffer.h>
#include <sys/wait.h>

#include "support/wait_until.h"

namespace oxide::testing {

void ControllerTest::SetUp() {
  sim_ = std::make_unique<sim_test::SimProcess>(sim_args());
  ASSERT_TRUE(sim_->running());
  api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
  setup_ = std::make_unique<PluginSetup>(mode());
  setup_->env["OXIDE_HOST"] = sim_->base_url();
  setup_->env["OXIDE_TOKEN"] = sim_test::SimProcess::kToken;
  setup_->env["OXIDE_PROJECT"] = "demo";
  setup_->args.push_back("--oxide-insecure");
  for (const std::string& arg : plugin_args())
    setup_->args.push_back(arg);
  BeforePluginStart();
  StartPlugin();
}

void ControllerTest::TearDown() {
  StopPlugin();
  api_.reset();
  if (sim_ && sim_->running()) sim_->stop();
}

void ControllerTest::StartPlugin() {
  plugin_ = setup_->Start();
  controller_ = csi::v1::Controller::NewStub(UnixChannel(setup_->socket_path()));
}

void ControllerTest::StopPlugin() {
  if (!plugin_) return;
  plugin_->Signal(SIGTERM);
  EXPECT_EQ(plugin_->WaitExit(), 0) << plugin_->Log();
  EXPECT_EQ(plugin_->Log().find(sim_test::SimProcess::kToken), std::string::npos)
      << "the Oxide token reached the log";
  plugin_.reset();
}

std::unique_ptr<grpc::ClientContext> ControllerTest::Call(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

csi::v1::VolumeCapability ControllerTest::MountCapability(
    csi::v1::VolumeCapability_AccessMode::Mode mode) {
  csi::v1::VolumeCapability capability;
  capability.mutable_mount()->set_fs_type("ext4");
  capability.mutable_access_mode()->set_mode(mode);
  return capability;
}

csi::v1::CreateVolumeRequest ControllerTest::CreateRequest(const std::string& name, int64_t gib) {
  csi::v1::CreateVolumeRequest request;
  request.set_name(name);
  request.mutable_capacity_range()->set_required_bytes(gib * kGiB);
  *request.add_volume_capabilities() = MountCapability();
  return request;
}

grpc::Status ControllerTest::Create(const csi::v1::CreateVolumeRequest& request,
                                    csi::v1::CreateVolumeResponse* response) {
  csi::v1::CreateVolumeResponse ignored;
  return controller_->CreateVolume(Call().get(), request, response ? response : &ignored);
}

csi::v1::Volume ControllerTest::MustCreate(const std::string& name, int64_t gib) {
  csi::v1::CreateVolumeResponse response;
  grpc::Status status = Create(CreateRequest(name, gib), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.volume();
}

grpc::Status ControllerTest::Delete(const std::string& volume_id) {
  csi::v1::DeleteVolumeRequest request;
  request.set_volume_id(volume_id);
  csi::v1::DeleteVolumeResponse response;
  return controller_->DeleteVolume(Call().get(), request, &response);
}

grpc::Status ControllerTest::Publish(const std::string& volume_id, const std::string& node,
                                     csi::v1::ControllerPublishVolumeResponse* response) {
  csi::v1::ControllerPublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_node_id(node);
  *request.mutable_volume_capability() = MountCapability();
  csi::v1::ControllerPublishVolumeResponse ignored;
  return controller_->ControllerPublishVolume(Call().get(), request,
                                              response ? response : &ignored);
}

csi::v1::ControllerPublishVolumeResponse ControllerTest::MustPublish(const std::string& volume_id,
                                                                     const std::string& node) {
  csi::v1::ControllerPublishVolumeResponse response;
  grpc::Status status = Publish(volume_id, node, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

grpc::Status ControllerTest::Unpublish(const std::string& volume_id, const std::string& node) {
  csi::v1::ControllerUnpublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_node_id(node);
  csi::v1::ControllerUnpublishVolumeResponse response;
  return controller_->ControllerUnpublishVolume(Call().get(), request, &response);
}

std::string ControllerTest::Instance(const std::string& name, const std::string& run_state) {
  sim_test::Reply reply = api_->post(
      "/__sim/instances", {{"project", "demo"}, {"name", name}, {"run_state", run_state}});
  EXPECT_EQ(reply.status, 201) << reply.body;
  return reply.json().value("id", "");
}

nlohmann::json ControllerTest::SimDisk(const std::string& id_or_name) {
  // An id is looked up globally; Oxide refuses a project beside it.
  bool is_id = id_or_name.size() == 36 && id_or_name[8] == '-';
  sim_test::Reply reply = api_->get("/v1/disks/" + id_or_name + (is_id ? "" : "?project=demo"));
  if (reply.status == 404) return nullptr;
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json();
}

int ControllerTest::CountSimRequests(const std::string& method, const std::string& operation) {
  sim_test::Reply reply = api_->get("/__sim/requests");
  int count = 0;
  const nlohmann::json log = reply.json();  // a named value: the range must not dangle
  for (const auto& entry : log["requests"]) {
    if (entry.value("method", "") == method && entry.value("operation", "") == operation) ++count;
  }
  return count;
}

void ControllerTest::SetSimFaults(const nlohmann::json& rules) {
  sim_test::Reply reply = api_->put("/__sim/faults", {{"seed", 1}, {"rules", rules}});
  EXPECT_EQ(reply.status, 200) << reply.body;
}

void ExpectCode(const grpc::Status& status, grpc::StatusCode code,
                const std::string& message_part) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  if (!message_part.empty()) {
    EXPECT_NE(status.error_message().find(message_part), std::string::npos)
        << "message: " << status.error_message() << "\nexpected to contain: " << message_part;
  }
}

grpc::Status ControllerTest::ProbeAfterLogged(const std::string& record) {
  EXPECT_TRUE(plugin_->WaitForLog(record)) << "no \"" << record << "\" in the plugin's log";
  auto identity = csi::v1::Identity::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::ProbeResponse response;
  return identity->Probe(Call().get(), {}, &response);
}

grpc::Status ControllerTest::Probe() {
  auto identity = csi::v1::Identity::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::ProbeResponse response;
  return identity->Probe(Call().get(), {}, &response);
}

grpc::Status ControllerTest::SendBytes(const std::string& path, const std::string& wire) {
  std::shared_ptr<grpc::Channel> channel = UnixChannel(setup_->socket_path());
  grpc::internal::RpcMethod method(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC, channel);
  grpc::Slice slice(wire);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  auto context = Call();
  return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      channel.get(), method, context.get(), request, &response);
}

grpc::Status ControllerTest::ProbeUntil(grpc::StatusCode code, const std::string& message_part,
                                        std::chrono::milliseconds limit) {
  grpc::Status last;
  WaitUntil(
      [&] {
        last = Probe();
        return last.error_code() == code &&
               last.error_message().find(message_part) != std::string::npos;
      },
      limit, std::chrono::milliseconds(50));
  return last;
}

std::string LogLineWith(const std::string& log, const std::string& text) {
  const size_t at = log.find(text);
  if (at == std::string::npos) return "";
  const size_t begin = log.rfind('\n', at) == std::string::npos ? 0 : log.rfind('\n', at) + 1;
  const size_t end = log.find('\n', at);
  return log.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace oxide::testing
