// Implementation of VolumeDriver: one CompletionQueue polled by the Run() thread; calls and
// backoff alarms are tags on it.
#include "support/volume_driver.h"

#include <grpcpp/alarm.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <random>
#include <unordered_set>

#include "csi.grpc.pb.h"

namespace oxide::testing {
namespace {

using Clock = std::chrono::steady_clock;

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "?";
  }
}

csi::v1::VolumeCapability BlockCapability() {
  csi::v1::VolumeCapability capability;
  capability.mutable_block();
  capability.mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

}  // namespace

const char* VolumeStepName(VolumeStep step) {
  switch (step) {
    case VolumeStep::kCreate:
      return "CreateVolume";
    case VolumeStep::kPublish:
      return "ControllerPublishVolume";
    case VolumeStep::kUnpublish:
      return "ControllerUnpublishVolume";
    case VolumeStep::kDelete:
      return "DeleteVolume";
    case VolumeStep::kDone:
      return "done";
  }
  return "?";
}

std::shared_ptr<grpc::Channel> ReconnectingUnixChannel(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  // gRPC also uses this as the connect timeout (the handshake included): keep it long, or a
  // busy process (10,000 calls queued on a connecting channel) times its handshakes out.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
}

double Quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index =
      std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())));
  return values[index];
}

struct VolumeDriver::Impl {
  struct Flow;
  // Everything put on the completion queue.
  struct Tag {
    bool is_call = true;
    Flow* flow = nullptr;
  };
  struct Call : Tag {
    VolumeStep step = VolumeStep::kCreate;
    grpc::ClientContext context;
    grpc::Status status;
    Clock::time_point started;
    csi::v1::CreateVolumeResponse create;
    csi::v1::ControllerPublishVolumeResponse publish;
    csi::v1::ControllerUnpublishVolumeResponse unpublish;
    csi::v1::DeleteVolumeResponse remove;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::CreateVolumeResponse>> create_reader;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::ControllerPublishVolumeResponse>>
        publish_reader;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::ControllerUnpublishVolumeResponse>>
        unpublish_reader;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::DeleteVolumeResponse>> delete_reader;
  };
  struct Timer : Tag {
    grpc::Alarm alarm;
  };
  struct Flow {
    size_t index = 0;
    VolumeStep step = VolumeStep::kCreate;
    std::chrono::milliseconds backoff{0};
  };

  VolumeDriver* owner;
  std::unique_ptr<csi::v1::Controller::Stub> stub;
  std::vector<VolumePlan> plans;
  DriverOptions options;
  grpc::CompletionQueue cq;
  std::vector<Flow> flows;
  std::unordered_set<Tag*> outstanding;
  std::mt19937_64 rng;
  size_t next_flow = 0;
  size_t active = 0;
  bool stopping = false;

  void StartFlows() {
    size_t cap = options.concurrency == 0 ? plans.size() : options.concurrency;
    while (!stopping && active < cap && next_flow < plans.size()) {
      Flow& flow = flows[next_flow++];
      flow.backoff = options.backoff_first;
      ++active;
      Issue(&flow);
    }
  }

  void Issue(Flow* flow) {
    auto* call = new Call;
    call->flow = flow;
    call->step = flow->step;
    call->started = Clock::now();
    call->context.set_deadline(std::chrono::system_clock::now() + options.deadline);
    const VolumePlan& plan = plans[flow->index];
    const std::string& volume_id = owner->results_[flow->index].volume_id;
    switch (flow->step) {
      case VolumeStep::kCreate: {
        csi::v1::CreateVolumeRequest request;
        request.set_name(plan.name);
        request.mutable_capacity_range()->set_required_bytes(
            static_cast<int64_t>(options.size_bytes));
        *request.add_volume_capabilities() = BlockCapability();
        call->create_reader = stub->AsyncCreateVolume(&call->context, request, &cq);
        call->create_reader->Finish(&call->create, &call->status, call);
        break;
      }
      case VolumeStep::kPublish: {
        csi::v1::ControllerPublishVolumeRequest request;
        request.set_volume_id(volume_id);
        request.set_node_id(plan.node_id);
        *request.mutable_volume_capability() = BlockCapability();
        call->publish_reader = stub->AsyncControllerPublishVolume(&call->context, request, &cq);
        call->publish_reader->Finish(&call->publish, &call->status, call);
        break;
      }
      case VolumeStep::kUnpublish: {
        csi::v1::ControllerUnpublishVolumeRequest request;
        request.set_volume_id(volume_id);
        request.set_node_id(plan.node_id);
        call->unpublish_reader = stub->AsyncControllerUnpublishVolume(&call->context, request, &cq);
        call->unpublish_reader->Finish(&call->unpublish, &call->status, call);
        break;
      }
      case VolumeStep::kDelete: {
        csi::v1::DeleteVolumeRequest request;
        request.set_volume_id(volume_id);
        call->delete_reader = stub->AsyncDeleteVolume(&call->context, request, &cq);
        call->delete_reader->Finish(&call->remove, &call->status, call);
        break;
      }
      case VolumeStep::kDone:
        break;
    }
    outstanding.insert(call);
    size_t now = ++owner->in_flight_;
    owner->max_in_flight_ = std::max(owner->max_in_flight_, now);
  }

  void OnCall(Call* call) {
    --owner->in_flight_;
    Flow* flow = call->flow;
    StepStats& stats = owner->stats_[static_cast<int>(call->step)];
    ++stats.attempts;
    VolumeResult& result = owner->results_[flow->index];
    if (!call->status.ok()) {
      ++stats.errors[CodeName(call->status.error_code())];
      stats.examples.emplace(CodeName(call->status.error_code()), call->status.error_message());
      result.last_error = std::string(VolumeStepName(call->step)) + ": " +
                          CodeName(call->status.error_code()) + ": " + call->status.error_message();
      if (stopping) return;
      // Backoff with jitter: a uniform wait in [backoff/2, backoff], then double it (capped).
      auto half = flow->backoff.count() / 2;
      std::uniform_int_distribution<int64_t> pick(half, flow->backoff.count());
      auto wait = std::chrono::milliseconds(pick(rng));
      flow->backoff = std::min(flow->backoff * 2, options.backoff_max);
      auto* timer = new Timer;
      timer->is_call = false;
      timer->flow = flow;
      outstanding.insert(timer);
      timer->alarm.Set(&cq, std::chrono::system_clock::now() + wait, timer);
      return;
    }
    stats.ok_latency_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - call->started).count());
    if (call->step == VolumeStep::kCreate) result.volume_id = call->create.volume().volume_id();
    flow->backoff = options.backoff_first;
    VolumeStep last = plans[flow->index].last;
    if (flow->step == last) {
      flow->step = VolumeStep::kDone;
      result.reached = VolumeStep::kDone;
      result.last_error.clear();
      ++owner->done_;
      --active;
      StartFlows();
      return;
    }
    flow->step = static_cast<VolumeStep>(static_cast<int>(flow->step) + 1);
    result.reached = flow->step;
    if (!stopping) Issue(flow);
  }
};

VolumeDriver::VolumeDriver(std::shared_ptr<grpc::Channel> channel, std::vector<VolumePlan> plans,
                           DriverOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->owner = this;
  impl_->stub = csi::v1::Controller::NewStub(channel);
  impl_->plans = std::move(plans);
  impl_->options = options;
  impl_->rng.seed(options.seed);
  impl_->flows.resize(impl_->plans.size());
  results_.resize(impl_->plans.size());
  for (size_t i = 0; i < impl_->flows.size(); ++i)
    impl_->flows[i].index = i;
}

VolumeDriver::~VolumeDriver() = default;

bool VolumeDriver::Run(std::chrono::milliseconds limit) {
  Impl& impl = *impl_;
  auto give_up = Clock::now() + limit;
  impl.StartFlows();
  while (!impl.outstanding.empty()) {
    if (!impl.stopping && Clock::now() >= give_up) {
      impl.stopping = true;
      for (Impl::Tag* tag : impl.outstanding) {
        if (tag->is_call) {
          static_cast<Impl::Call*>(tag)->context.TryCancel();
        } else {
          static_cast<Impl::Timer*>(tag)->alarm.Cancel();
        }
      }
    }
    void* raw = nullptr;
    bool ok = false;
    auto status = impl.cq.AsyncNext(
        &raw, &ok, std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    if (status != grpc::CompletionQueue::GOT_EVENT) continue;
    auto* tag = static_cast<Impl::Tag*>(raw);
    impl.outstanding.erase(tag);
    if (tag->is_call) {
      auto* call = static_cast<Impl::Call*>(tag);
      impl.OnCall(call);
      delete call;
    } else {
      auto* timer = static_cast<Impl::Timer*>(tag);
      Impl::Flow* flow = timer->flow;
      delete timer;
      if (!impl.stopping) impl.Issue(flow);
    }
  }
  impl.cq.Shutdown();
  void* raw = nullptr;
  bool ok = false;
  while (impl.cq.Next(&raw, &ok)) {
  }
  return done_.load() == impl.plans.size();
}

}  // namespace oxide::testing
