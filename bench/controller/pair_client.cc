// RunPairs: a pair is a CreateVolume whose answer starts the pair's DeleteVolume; when one ends,
// the next pair starts. Every call is a tag on one CompletionQueue.
#include "pair_client.h"

#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>

#include "csi.grpc.pb.h"
#include "util/status.h"

namespace oxide::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Call {
  bool is_create = true;
  Clock::time_point pair_started;
  Clock::time_point started;
  grpc::ClientContext context;
  grpc::Status status;
  csi::v1::CreateVolumeResponse create;
  csi::v1::DeleteVolumeResponse remove;
  std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::CreateVolumeResponse>> create_reader;
  std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::DeleteVolumeResponse>> remove_reader;
};

class PairRunner {
 public:
  PairRunner(const std::shared_ptr<grpc::Channel>& channel, const PairOptions& options)
      : stub_(csi::v1::Controller::NewStub(channel)), options_(options) {}

  PairResult Run() {
    const auto started = Clock::now();
    while (active_ < options_.concurrency && next_ < options_.pairs)
      StartPair();
    while (active_ > 0) {
      void* tag = nullptr;
      bool ok = false;
      if (!cq_.Next(&tag, &ok)) break;
      std::unique_ptr<Call> call(static_cast<Call*>(tag));
      OnAnswer(*call);
    }
    result_.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
    return std::move(result_);
  }

 private:
  void StartPair() {
    ++active_;
    auto call = std::make_unique<Call>();
    call->pair_started = call->started = Clock::now();
    call->context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
    csi::v1::CreateVolumeRequest request;
    request.set_name(options_.name_prefix + std::to_string(next_++));
    request.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(options_.size_bytes));
    csi::v1::VolumeCapability* capability = request.add_volume_capabilities();
    capability->mutable_mount()->set_fs_type("ext4");
    capability->mutable_access_mode()->set_mode(
        csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    call->create_reader = stub_->AsyncCreateVolume(&call->context, request, &cq_);
    Call* raw = call.release();
    raw->create_reader->Finish(&raw->create, &raw->status, raw);
  }

  void StartDelete(const Call& create) {
    auto call = std::make_unique<Call>();
    call->is_create = false;
    call->pair_started = create.pair_started;
    call->started = Clock::now();
    call->context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
    csi::v1::DeleteVolumeRequest request;
    request.set_volume_id(create.create.volume().volume_id());
    call->remove_reader = stub_->AsyncDeleteVolume(&call->context, request, &cq_);
    Call* raw = call.release();
    raw->remove_reader->Finish(&raw->remove, &raw->status, raw);
  }

  void OnAnswer(const Call& call) {
    const char* method = call.is_create ? "CreateVolume" : "DeleteVolume";
    if (!call.status.ok()) {
      const std::string key =
          std::string(method) + " " +
          StatusCodeName(static_cast<StatusCode>(call.status.error_code()));  // the same numbers
      ++result_.errors[key];
      result_.examples.emplace(key, call.status.error_message());
      ++result_.failed;
      EndPair();
      return;
    }
    if (call.is_create) {
      result_.create_ms.push_back(MsSince(call.started));
      StartDelete(call);
      return;
    }
    result_.delete_ms.push_back(MsSince(call.started));
    result_.pair_ms.push_back(MsSince(call.pair_started));
    ++result_.ok;
    EndPair();
  }

  void EndPair() {
    --active_;
    if (next_ < options_.pairs) StartPair();
  }

  std::unique_ptr<csi::v1::Controller::Stub> stub_;
  PairOptions options_;
  grpc::CompletionQueue cq_;
  PairResult result_;
  int next_ = 0;
  int active_ = 0;
};

}  // namespace

PairResult RunPairs(const std::shared_ptr<grpc::Channel>& channel, const PairOptions& options) {
  return PairRunner(channel, options).Run();
}

}  // namespace oxide::bench
