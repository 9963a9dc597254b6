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
#include "util/status.h"

namespace oxide::testing {
namespace {

using Clock = std::chrono::steady_clock;

const char* CodeName(grpc::StatusCode code) {
  return StatusCodeName(static_cast<StatusCode>(code));  // the same numbers
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
  static constexpr const char* kNames[] = {"CreateVolume", "ControllerPublishVolume",
                                           "ControllerUnpublishVolume", "DeleteVolume", "done"};
  return kNames[static_cast<int>(step)];
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
    std::shared_ptr<void> pending;  // the response and its reader
    csi::v1::CreateVolumeResponse* create = nullptr;
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

  template <typename Response>
  struct Pending {
    Response response;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
  };

  // Starts the stub's async `method` for `call`; the answer comes as the call's tag.
  template <typename Response, typename Request, typename Method>
  Response* Start(Call* call, Method method, const Request& request) {
    auto pending = std::make_shared<Pending<Response>>();
    pending->reader = (stub.get()->*method)(&call->context, request, &cq);
    pending->reader->Finish(&pending->response, &call->status, call);
    call->pending = pending;
    return &pending->response;
  }

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
        call->create = Start<csi::v1::CreateVolumeResponse>(
            call, &csi::v1::Controller::Stub::AsyncCreateVolume, request);
        break;
      }
      case VolumeStep::kPublish: {
        csi::v1::ControllerPublishVolumeRequest request;
        request.set_volume_id(volume_id);
        request.set_node_id(plan.node_id);
        *request.mutable_volume_capability() = BlockCapability();
        Start<csi::v1::ControllerPublishVolumeResponse>(
            call, &csi::v1::Controller::Stub::AsyncControllerPublishVolume, request);
        break;
      }
      case VolumeStep::kUnpublish: {
        csi::v1::ControllerUnpublishVolumeRequest request;
        request.set_volume_id(volume_id);
        request.set_node_id(plan.node_id);
        Start<csi::v1::ControllerUnpublishVolumeResponse>(
            call, &csi::v1::Controller::Stub::AsyncControllerUnpublishVolume, request);
        break;
      }
      case VolumeStep::kDelete: {
        csi::v1::DeleteVolumeRequest request;
        request.set_volume_id(volume_id);
        Start<csi::v1::DeleteVolumeResponse>(call, &csi::v1::Controller::Stub::AsyncDeleteVolume,
                                             request);
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
    if (call->step == VolumeStep::kCreate) result.volume_id = call->create->volume().volume_id();
    if (options.on_answer) {
      const VolumePlan& plan = plans[flow->index];
      bool on_node = call->step == VolumeStep::kPublish || call->step == VolumeStep::kUnpublish;
      options.on_answer({.plan = flow->index,
                         .name = plan.name,
                         .step = call->step,
                         .volume_id = result.volume_id,
                         .node_id = on_node ? plan.node_id : ""});
    }
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
    const bool skip_node = flow->step == VolumeStep::kCreate && !plans[flow->index].publish;
    flow->step =
        skip_node ? VolumeStep::kDelete : static_cast<VolumeStep>(static_cast<int>(flow->step) + 1);
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
