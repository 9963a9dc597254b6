#include "backend/oxide_client.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "backend/error_mapping.h"
#include "backend/oxide_json.h"
#include "backend/request_paths.h"
#include "backend/retrying_transport.h"
#include "backend/token_retry_transport.h"
#include "config/validation.h"
#include "util/log.h"

namespace oxide::backend {
namespace {

using Json = nlohmann::json;

std::string Quoted(const std::string& value) {
  return "\"" + value + "\"";
}

const char* SortName(SortBy sort) {
  switch (sort) {
    case SortBy::kNameAscending:
      return "name_ascending";
    case SortBy::kNameDescending:
      return "name_descending";
    case SortBy::kIdAscending:
      return "id_ascending";
  }
  return "name_ascending";
}

HttpRequest Get(std::string target) {
  return {HttpMethod::kGet, std::move(target), "", true, {}};
}

HttpRequest Delete(std::string target) {
  return {HttpMethod::kDelete, std::move(target), "", true, {}};
}

// A POST is repeated by the retry layer only when `idempotent` says so.
HttpRequest Post(std::string target, const Json& body, bool idempotent) {
  return {HttpMethod::kPost, std::move(target), body.dump(), idempotent, {}};
}

// `operation`: the Oxide API's operationId, the label of the request's metrics.
HttpRequest Named(const char* operation, HttpRequest request) {
  request.operation = operation;
  return request;
}

// Attach and detach ARE retried, unlike creates. Oxide decides them idempotently (reference §9):
// attaching a disk already attached to this instance answers 202 whatever the instance's state,
// and detaching a detached disk answers 202 even on a running instance. So when the first
// attempt took effect and its answer was lost, the repeat answers 202 with the same disk, and
// when it did not, the repeat does the work: the caller gets what a lookup would have told it,
// one round trip sooner. A create is different: its repeat would answer 400 "already exists"
// for our own disk, so creates are never repeated and the engine looks the disk up instead.
constexpr bool kAttachDetachIdempotent = true;

constexpr std::string_view kInAnotherProject = "belongs to another project";

}  // namespace

bool IsInAnotherProject(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition &&
         status.message().find(kInAnotherProject) != std::string::npos;
}

std::unique_ptr<OxideClient> OxideClient::Create(uv_loop_t* loop, Clock* clock,
                                                 const ClientConfig& config) {
  auto token = std::make_unique<ApiToken>(config.transport.token);
  std::unique_ptr<TokenFileWatch> watch;
  if (!config.token_file.empty())
    watch = std::make_unique<TokenFileWatch>(loop, clock, config.token_file, token.get());
  // curl's own timers (I/O timeouts it drives) stay raw uv timers on `loop`.
  auto curl = std::make_unique<CurlMultiTransport>(loop, config.transport, token.get());
  auto retrying = std::make_unique<RetryingTransport>(clock, std::move(curl), config.retry);
  auto refreshing = std::make_unique<TokenRetryTransport>(token.get(), std::move(retrying));
  auto client =
      std::make_unique<OxideClient>(std::move(refreshing), config.project, config.transport.token);
  client->token_ = std::move(token);  // the plain constructor's stand-in goes first
  client->token_watch_ = std::move(watch);
  return client;
}

OxideClient::OxideClient(std::unique_ptr<HttpTransport> transport, std::string project,
                         std::string token)
    : token_(std::make_unique<ApiToken>(std::move(token))),
      transport_(std::move(transport)),
      project_(std::move(project)) {}

OxideClient::~OxideClient() = default;

Status OxideClient::Scrub(Status status) const {
  // The token in use now, and the ones the log knows: the current and the previous of each kind.
  const std::string& token = token_->value();
  std::string message = log::Redact(status.message());
  for (size_t at = message.find(token); !token.empty() && at != std::string::npos;
       at = message.find(token, at))
    message.replace(at, token.size(), "[REDACTED]");
  if (message == status.message()) return status;
  return status.WithMessage(std::move(message));
}

void OxideClient::Send(HttpRequest request, const std::string& what, HttpCallback done) {
  // Every answer passes the answer observer (the controller's view of Oxide health) first. The
  // debug record needs a wrapper that keeps copies of the request line; without debug logging
  // (the default), only the observer stands between the answer and `done`.
  if (!log::Enabled(log::Level::kDebug)) {
    return transport_->Send(std::move(request), [this, done = std::move(done)](HttpResponse r) {
      if (answer_observer_ != nullptr) answer_observer_->OxideAnswered(r);
      done(std::move(r));
    });
  }
  // A latency measurement for the log, not a deadline: real time, not the injected Clock.
  const auto start = std::chrono::steady_clock::now();
  std::string method = HttpMethodName(request.method);
  std::string target = request.target;
  transport_->Send(std::move(request), [this, start, method = std::move(method),
                                        target = std::move(target), what,
                                        done = std::move(done)](HttpResponse response) {
    log::Debug("oxide api call", {{"call", what},
                                  {"method", method},
                                  {"target", target},
                                  {"status", std::to_string(response.status)},
                                  {"attempts", std::to_string(response.attempts)},
                                  {"oxide_request_id", response.request_id},
                                  {"ms", log::Millis(std::chrono::steady_clock::now() - start)}});
    if (answer_observer_ != nullptr) answer_observer_->OxideAnswered(response);
    done(std::move(response));
  });
}

namespace {

// StatusFromResponse, with the operationId of the request that got the answer.
Status FromResponse(const char* operation, std::string_view what, const HttpResponse& response) {
  Status status = StatusFromResponse(what, response);
  if (!status.ok()) status.SetOxideRequest(OxideRequestId(response), operation);
  return status;
}

}  // namespace

template <typename T>
void OxideClient::Call(HttpRequest request, std::string what, Parser<T> parse, Done<T> done) {
  const char* operation = request.operation;
  Send(std::move(request), what,
       [this, operation, what, parse, done = std::move(done)](HttpResponse response) {
         Status status = FromResponse(operation, what, response);
         if (!status.ok()) return done(ExplainMissingProject(Scrub(std::move(status))));
         StatusOr<T> parsed = parse(what, response);
         if (!parsed.ok()) {
           Status unparsed = parsed.status();
           unparsed.SetOxideRequest(OxideRequestId(response), operation);
           return done(Scrub(std::move(unparsed)));
         }
         done(std::move(parsed));
       });
}

void OxideClient::CallNoBody(HttpRequest request, std::string what, DoneStatus done) {
  const char* operation = request.operation;
  Send(std::move(request), what,
       [this, operation, what, done = std::move(done)](HttpResponse response) {
         done(ExplainMissingProject(Scrub(FromResponse(operation, what, response))));
       });
}

template <typename T>
Done<T> OxideClient::OnlyInProject(const char* kind, Done<T> done) {
  return [this, kind, done = std::move(done)](StatusOr<T> found) mutable {
    if (!found.ok() || (!project_id_.empty() && found->project_id == project_id_)) {
      return done(std::move(found));
    }
    ResolveProjectId([this, kind, found = std::move(*found),
                      done = std::move(done)](StatusOr<std::string> ours) mutable {
      if (!ours.ok()) return done(ours.status());
      if (found.project_id == *ours) return done(std::move(found));
      done(FailedPrecondition("Oxide " + std::string(kind) + " " + found.id + " (" +
                              Quoted(found.name) + ") " + std::string(kInAnotherProject) + " (" +
                              found.project_id + "), not to project " + Quoted(project_) +
                              " that this plugin manages (--oxide-project), so the plugin does "
                              "not act on it; use a plugin configured for that project"));
    });
  };
}

Status OxideClient::ExplainMissingProject(Status status) const {
  if (status.code() != StatusCode::kNotFound) return status;
  const std::string& m = status.message();
  if (m.find("project with name " + Quoted(project_)) == std::string::npos &&
      m.find("project with id " + Quoted(project_)) == std::string::npos) {
    return status;
  }
  return FailedPrecondition("project " + Quoted(project_) +
                            " (--oxide-project, OXIDE_PROJECT) does not exist in Oxide, or the API "
                            "token's user cannot see it; create the project, grant the user "
                            "access, or fix the setting: " +
                            m)
      .MarkOperatorMustFix()
      .SetOxideRequest(status.oxide_request_id(), status.oxide_operation());
}

void OxideClient::ResolveProjectId(Done<std::string> done) {
  project_id_waiters_.push_back(std::move(done));
  if (project_id_waiters_.size() > 1) return;  // a request is already on its way
  GetProject(project_, [this](StatusOr<Project> project) {
    Status error = project.status();
    if (project.ok()) {
      project_id_ = project->id;
    }
    std::vector<Done<std::string>> waiters = std::move(project_id_waiters_);
    project_id_waiters_.clear();
    for (Done<std::string>& waiter : waiters) {
      project.ok() ? waiter(project->id) : waiter(error);
    }
  });
}

std::string OxideClient::PageQuery(const PageRequest& page) const {
  Query query;
  query.Add("project", project_);  // ignored by the server when a token is given (§4)
  query.Add("limit", std::to_string(std::clamp<uint32_t>(page.limit, 1, 10000)));
  query.AddIfSet("page_token", page.page_token);
  if (page.page_token.empty()) query.Add("sort_by", SortName(page.sort_by));
  return query.ToString();
}

void OxideClient::GetDisk(const std::string& name_or_id, Done<Disk> done) {
  if (IsUuid(name_or_id)) done = OnlyInProject<Disk>("disk", std::move(done));
  Call<Disk>(Named("disk_view", Get(ObjectTarget("disks", name_or_id, project_))),
             "get disk " + Quoted(name_or_id), &ParseDisk, std::move(done));
}

void OxideClient::CreateDisk(const DiskCreate& request, Done<Disk> done) {
  Json source =
      request.snapshot_id.empty()
          ? Json{{"type", "blank"}, {"block_size", request.block_size}}
          : Json{{"type", "snapshot"}, {"snapshot_id", request.snapshot_id}, {"read_only", false}};
  // A local disk has no source: Oxide gives it 4096-byte blocks and no snapshot or image.
  const Json backend = request.disk_type == kDiskTypeLocal
                           ? Json{{"type", kDiskTypeLocal}}
                           : Json{{"type", kDiskTypeDistributed}, {"disk_source", source}};
  const Json body = {{"name", request.name},
                     {"description", request.description},
                     {"size", request.size},
                     {"disk_backend", backend}};
  const std::string target = "/v1/disks" + Query().Add("project", project_).ToString();
  Call<Disk>(Named("disk_create", Post(target, body, /*idempotent=*/false)),
             "create disk " + Quoted(request.name), &ParseDisk, std::move(done));
}

void OxideClient::DeleteDisk(const std::string& name_or_id, DoneStatus done) {
  CallNoBody(Named("disk_delete", Delete(ObjectTarget("disks", name_or_id, project_))),
             "delete disk " + Quoted(name_or_id), std::move(done));
}

void OxideClient::ListDisks(const PageRequest& page, Done<Page<Disk>> done) {
  Call<Page<Disk>>(Named("disk_list", Get("/v1/disks" + PageQuery(page))),
                   "list disks of project " + Quoted(project_), &ParseDiskPage, std::move(done));
}

void OxideClient::GetInstance(const std::string& name_or_id, Done<Instance> done) {
  Call<Instance>(Named("instance_view", Get(ObjectTarget("instances", name_or_id, project_))),
                 "get instance " + Quoted(name_or_id), &ParseInstance, std::move(done));
}

void OxideClient::ListInstanceDisks(const std::string& instance, const PageRequest& page,
                                    Done<Page<Disk>> done) {
  Query query;
  if (!IsUuid(instance)) query.Add("project", project_);
  query.Add("limit", std::to_string(std::clamp<uint32_t>(page.limit, 1, 10000)));
  query.AddIfSet("page_token", page.page_token);
  if (page.page_token.empty()) query.Add("sort_by", SortName(page.sort_by));
  const std::string target =
      "/v1/instances/" + PercentEncode(instance) + "/disks" + query.ToString();
  Call<Page<Disk>>(Named("instance_disk_list", Get(target)),
                   "list disks of instance " + Quoted(instance), &ParseDiskPage, std::move(done));
}

void OxideClient::AttachDisk(const std::string& instance, const std::string& disk,
                             Done<Disk> done) {
  Call<Disk>(Named("instance_disk_attach",
                   Post(ObjectTarget("instances", instance, project_, "/disks/attach"),
                        {{"disk", disk}}, kAttachDetachIdempotent)),
             "attach disk " + Quoted(disk) + " to instance " + Quoted(instance), &ParseDisk,
             std::move(done));
}

void OxideClient::DetachDisk(const std::string& instance, const std::string& disk,
                             Done<Disk> done) {
  Call<Disk>(Named("instance_disk_detach",
                   Post(ObjectTarget("instances", instance, project_, "/disks/detach"),
                        {{"disk", disk}}, kAttachDetachIdempotent)),
             "detach disk " + Quoted(disk) + " from instance " + Quoted(instance), &ParseDisk,
             std::move(done));
}

void OxideClient::CreateSnapshot(const SnapshotCreate& request, Done<Snapshot> done) {
  const Json body = {
      {"name", request.name}, {"description", request.description}, {"disk", request.disk}};
  const std::string target = "/v1/snapshots" + Query().Add("project", project_).ToString();
  Call<Snapshot>(Named("snapshot_create", Post(target, body, /*idempotent=*/false)),
                 "create snapshot " + Quoted(request.name) + " of disk " + Quoted(request.disk),
                 &ParseSnapshot, std::move(done));
}

void OxideClient::GetSnapshot(const std::string& name_or_id, Done<Snapshot> done) {
  if (IsUuid(name_or_id)) done = OnlyInProject<Snapshot>("snapshot", std::move(done));
  Call<Snapshot>(Named("snapshot_view", Get(ObjectTarget("snapshots", name_or_id, project_))),
                 "get snapshot " + Quoted(name_or_id), &ParseSnapshot, std::move(done));
}

void OxideClient::DeleteSnapshot(const std::string& name_or_id, DoneStatus done) {
  CallNoBody(Named("snapshot_delete", Delete(ObjectTarget("snapshots", name_or_id, project_))),
             "delete snapshot " + Quoted(name_or_id), std::move(done));
}

void OxideClient::ListSnapshots(const PageRequest& page, Done<Page<Snapshot>> done) {
  Call<Page<Snapshot>>(Named("snapshot_list", Get("/v1/snapshots" + PageQuery(page))),
                       "list snapshots of project " + Quoted(project_), &ParseSnapshotPage,
                       std::move(done));
}

void OxideClient::GetProject(const std::string& name_or_id, Done<Project> done) {
  Call<Project>(Named("project_view", Get("/v1/projects/" + PercentEncode(name_or_id))),
                "get project " + Quoted(name_or_id), &ParseProject, std::move(done));
}

void OxideClient::GetUtilization(Done<Utilization> done) {
  Call<Utilization>(Named("utilization_view", Get("/v1/utilization")), "get silo utilization",
                    &ParseUtilization, std::move(done));
}

void OxideClient::GetCurrentUser(Done<CurrentUser> done) {
  Call<CurrentUser>(Named("current_user_view", Get("/v1/me")), "get current user",
                    &ParseCurrentUser, std::move(done));
}

void OxideClient::Ping(DoneStatus done) {
  CallNoBody(Named("ping", Get("/v1/ping")), "ping", std::move(done));
}

}  // namespace oxide::backend
