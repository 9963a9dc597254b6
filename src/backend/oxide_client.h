// The typed Oxide API client the controller engine uses: disks, instances, attach/detach,
// snapshots, utilization, me, ping. Loop thread only: every call returns at once and its callback
// runs later on the loop thread, with a Status mapped by error_mapping.cc.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/answer_observer.h"
#include "backend/api_token.h"
#include "backend/client_config.h"
#include "backend/curl_multi_transport.h"
#include "backend/http_types.h"
#include "backend/oxide_types.h"
#include "backend/retry_policy.h"
#include "backend/token_file_watch.h"
#include "loop/clock.h"
#include "util/status.h"

namespace oxide::backend {

template <typename T>
using Done = std::function<void(StatusOr<T>)>;
using DoneStatus = std::function<void(Status)>;

class OxideClient {
 public:
  // The production stack: TokenRetryTransport over RetryingTransport (waiting on `clock`) over
  // CurlMultiTransport (on `loop`), all sending one ApiToken, kept equal to config.token_file by
  // a TokenFileWatch when there is one.
  static std::unique_ptr<OxideClient> Create(uv_loop_t* loop, Clock* clock,
                                             const ClientConfig& config);

  // `token` is only used to scrub it from messages (defence in depth; Oxide never echoes it):
  // `transport` sends its own.
  OxideClient(std::unique_ptr<HttpTransport> transport, std::string project, std::string token);
  // Pending callbacks are dropped uncalled; do not destroy the client from inside a callback.
  ~OxideClient();
  OxideClient(const OxideClient&) = delete;
  OxideClient& operator=(const OxideClient&) = delete;

  // `name_or_id`: a UUID is looked up by id, anything else as a name in the project. Oxide finds
  // an id in any project the token can see; a disk or snapshot found by id that is not in the
  // configured project is refused with FAILED_PRECONDITION (IsInAnotherProject() tells).
  void GetDisk(const std::string& name_or_id, Done<Disk> done);
  void CreateDisk(const DiskCreate& request, Done<Disk> done);
  // Deletes (and attach/detach) by id are not checked: pass only ids known to be the project's,
  // from a local row or a GetDisk/GetSnapshot.
  void DeleteDisk(const std::string& name_or_id, DoneStatus done);
  void ListDisks(const PageRequest& page, Done<Page<Disk>> done);

  void GetInstance(const std::string& name_or_id, Done<Instance> done);
  void ListInstanceDisks(const std::string& instance, const PageRequest& page,
                         Done<Page<Disk>> done);
  // `disk` is a name (looked up in the instance's project) or an id.
  void AttachDisk(const std::string& instance, const std::string& disk, Done<Disk> done);
  void DetachDisk(const std::string& instance, const std::string& disk, Done<Disk> done);

  void CreateSnapshot(const SnapshotCreate& request, Done<Snapshot> done);
  void GetSnapshot(const std::string& name_or_id, Done<Snapshot> done);
  void DeleteSnapshot(const std::string& name_or_id, DoneStatus done);
  void ListSnapshots(const PageRequest& page, Done<Page<Snapshot>> done);

  void GetProject(const std::string& name_or_id, Done<Project> done);
  void GetUtilization(Done<Utilization> done);
  void GetCurrentUser(Done<CurrentUser> done);  // validates the token
  void Ping(DoneStatus done);                   // liveness only: needs no token

  HttpTransport& transport() { return *transport_; }
  // The token the transport sends (reloads(), the observer for rejections and reloads).
  ApiToken& token() { return *token_; }
  const TokenFileWatch* token_watch() const { return token_watch_.get(); }  // null: none
  const std::string& project() const { return project_; }
  // Hears every final answer (at most one listener; null to stop). It must outlive the client
  // or unset itself; answers still under way then reach nobody.
  void set_answer_observer(AnswerObserver* observer) { answer_observer_ = observer; }

 private:
  template <typename T>
  using Parser = StatusOr<T> (*)(std::string_view, const HttpResponse&);

  template <typename T>
  void Call(HttpRequest request, std::string what, Parser<T> parse, Done<T> done);
  void CallNoBody(HttpRequest request, std::string what, DoneStatus done);
  void Send(HttpRequest request, const std::string& what, HttpCallback done);
  Status Scrub(Status status) const;
  // Oxide's 404 for the configured project itself (it does not exist, or the token's user cannot
  // see it) is a setting to fix, not a missing object: FAILED_PRECONDITION naming the setting.
  Status ExplainMissingProject(Status status) const;
  std::string PageQuery(const PageRequest& page) const;
  // Wraps `done` so that an object found by id reaches it only when it is in the project.
  template <typename T>
  Done<T> OnlyInProject(const char* kind, Done<T> done);
  // The configured project's id, asked of Oxide (concurrent callers share one request). Asked
  // again whenever an object's project differs: a project deleted and made again has a new id.
  void ResolveProjectId(Done<std::string> done);

  // Declared before the transport, which reads the token and its watch: they outlive it.
  std::unique_ptr<ApiToken> token_;
  std::unique_ptr<TokenFileWatch> token_watch_;  // null without a token file
  std::unique_ptr<HttpTransport> transport_;
  std::string project_;
  std::string project_id_;  // empty until resolved
  std::vector<Done<std::string>> project_id_waiters_;
  AnswerObserver* answer_observer_ = nullptr;
};

// True for the FAILED_PRECONDITION of an object found by id in another project.
bool IsInAnotherProject(const Status& status);

}  // namespace oxide::backend
