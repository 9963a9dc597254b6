// The node startup taint removal: its steps (node/startup_taint_steps.h) against the stand-in
// Kubernetes API server replaying a recorded kube-apiserver exchange (recorded_exchange.h; real
// HTTPS, real libcurl), checking the exact requests the plugin sends; and its retries
// (node/startup_taint_removal.h) on a ManualClock with injected pass results, so the test drives
// the backoff without sleeping.
#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>
#include <optional>

#include "node/startup_taint_removal.h"
#include "node/startup_taint_steps.h"
#include "recorded_exchange.h"
#include "support/fake_kubernetes_api.h"
#include "support/log_capture.h"
#include "support/manual_clock.h"
#include "util/log.h"

namespace oxide::node {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeKubernetesApi;
using testing::RecordedAnswer;
using testing::RecordedExchange;
using testing::RecordedObject;

// ---- the steps, against the stand-in server

class StartupTaintStepsTest : public ::testing::Test {
 protected:
  StatusOr<TaintStep> Pass() {
    return RemoveStartupTaintOnce(api_.ClientOptions(), "worker-1", "csi.oxide.computer");
  }
  // "METHOD path" of each request so far.
  std::vector<std::string> Requests() const {
    std::vector<std::string> lines;
    for (const auto& r : api_.Log())
      lines.push_back(r.method + " " + r.path);
    return lines;
  }
  // The request must be exactly the recorded one: method, path, Content-Type and body (as JSON).
  static void ExpectRecorded(const FakeKubernetesApi::Request& request, const std::string& name) {
    const json& recorded = RecordedExchange()[name];
    EXPECT_EQ(request.method, recorded["method"]);
    EXPECT_EQ(request.path, recorded["path"]);
    EXPECT_EQ(request.content_type, recorded["content_type"]);
    EXPECT_EQ(json::parse(request.body, nullptr, false), recorded["body"]) << request.body;
  }

  FakeKubernetesApi api_;
};

constexpr const char* kGetNode = "GET /api/v1/nodes/worker-1";
constexpr const char* kGetCsiNode = "GET /apis/storage.k8s.io/v1/csinodes/worker-1";
constexpr const char* kPatchNode = "PATCH /api/v1/nodes/worker-1";

TEST_F(StartupTaintStepsTest, ANodeWithoutTheTaintTakesOneRead) {
  api_.SetAnswer("worker-1", RecordedObject("node_without_taint"));
  StatusOr<TaintStep> step = Pass();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, TaintStep::kAbsent);
  EXPECT_EQ(Requests(), std::vector<std::string>{kGetNode});
}

TEST_F(StartupTaintStepsTest, WhileTheCsiNodeLacksTheDriverNothingIsPatched) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  // No CSINode yet (the kubelet creates it): 404.
  StatusOr<TaintStep> step = Pass();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, TaintStep::kNotRegistered);
  // A CSINode listing another driver only.
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_without_driver"));
  step = Pass();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, TaintStep::kNotRegistered);
  EXPECT_EQ(Requests(), (std::vector<std::string>{kGetNode, kGetCsiNode, kGetNode, kGetCsiNode}));
}

TEST_F(StartupTaintStepsTest, OnceRegisteredOnePatchRemovesOnlyThatTaint) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_with_driver"));
  api_.QueuePatchAnswer("worker-1", RecordedAnswer("patch_response_ok"));
  StatusOr<TaintStep> step = Pass();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, TaintStep::kRemoved);
  ASSERT_EQ(Requests(), (std::vector<std::string>{kGetNode, kGetCsiNode, kPatchNode}));
  ExpectRecorded(api_.Log()[2], "patch_request");
}

TEST_F(StartupTaintStepsTest, AFailedTestOpOrAConflictIsAConflict) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_with_driver"));
  for (const char* answer : {"patch_response_test_failed", "patch_response_conflict"}) {
    api_.QueuePatchAnswer("worker-1", RecordedAnswer(answer));
    StatusOr<TaintStep> step = Pass();
    ASSERT_TRUE(step.ok()) << answer << ": " << step.status().ToString();
    EXPECT_EQ(*step, TaintStep::kConflict) << answer;
  }
}

TEST_F(StartupTaintStepsTest, AForbiddenPatchSaysWhichRbacIsMissing) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_with_driver"));
  api_.QueuePatchAnswer(
      "worker-1",
      {.status = 403,
       .body =
           R"({"kind":"Status","status":"Failure","message":"nodes \"worker-1\" is forbidden: User \"system:serviceaccount:oxide-csi:oxide-csi-node\" cannot patch resource \"nodes\"","reason":"Forbidden","code":403})"});
  StatusOr<TaintStep> step = Pass();
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(step.status().message().find("PATCH /api/v1/nodes/worker-1: HTTP 403: the node "
                                         "plugin's service account lacks RBAC \"patch\" on "
                                         "\"nodes\""),
            std::string::npos)
      << step.status().message();
  EXPECT_EQ(step.status().message().find(FakeKubernetesApi::kToken), std::string::npos);
}

TEST_F(StartupTaintStepsTest, AForbiddenCsiNodeReadSaysWhichRbacIsMissing) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", {.status = 403, .body = "{}"});
  StatusOr<TaintStep> step = Pass();
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.status().message().find("GET /apis/storage.k8s.io/v1/csinodes/worker-1: HTTP "
                                         "403: the node plugin's service account lacks RBAC "
                                         "\"get\" on \"csinodes\""),
            std::string::npos)
      << step.status().message();
}

TEST(StartupTaintPatchTest, RemovesTheTaintWithAnyEffectAndKeepsTheRestInOrder) {
  json node = {{"kind", "Node"},
               {"spec",
                {{"taints",
                  {{{"key", "a"}, {"effect", "NoSchedule"}},
                   {{"key", kAgentNotReadyTaint}, {"effect", "NoExecute"}},
                   {{"key", "b"}, {"value", "x"}, {"effect", "NoExecute"}},
                   {{"key", kAgentNotReadyTaint}, {"effect", "NoSchedule"}}}}}}};
  StatusOr<std::optional<std::string>> patch = TaintRemovalPatch(node.dump());
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  ASSERT_TRUE(patch->has_value());
  json expected =
      json::array({{{"op", "test"}, {"path", "/spec/taints"}, {"value", node["spec"]["taints"]}},
                   {{"op", "replace"},
                    {"path", "/spec/taints"},
                    {"value",
                     {{{"key", "a"}, {"effect", "NoSchedule"}},
                      {{"key", "b"}, {"value", "x"}, {"effect", "NoExecute"}}}}}});
  EXPECT_EQ(json::parse(**patch), expected);
}

TEST(StartupTaintPatchTest, NoTaintNoPatchAndBadBodiesAreErrors) {
  for (const char* body : {R"({"kind":"Node"})", R"({"kind":"Node","spec":{}})",
                           R"({"kind":"Node","spec":{"taints":null}})",
                           R"({"kind":"Node","spec":{"taints":[{"key":"other"}]}})"}) {
    StatusOr<std::optional<std::string>> patch = TaintRemovalPatch(body);
    ASSERT_TRUE(patch.ok()) << body;
    EXPECT_FALSE(patch->has_value()) << body;
  }
  for (const char* body : {"not json", R"({"kind":"Pod"})", R"({"kind":"Node","spec":[]})",
                           R"({"kind":"Node","spec":{"taints":{}}})"}) {
    EXPECT_FALSE(TaintRemovalPatch(body).ok()) << body;
  }
  EXPECT_FALSE(CsiNodeListsDriver(R"({"kind":"CSINode","spec":{"drivers":3}})", "d").ok());
  EXPECT_FALSE(*CsiNodeListsDriver(R"({"kind":"CSINode","spec":{"drivers":null}})", "d"));
  EXPECT_TRUE(*CsiNodeListsDriver(R"({"kind":"CSINode","spec":{"drivers":[{"name":"d"}]}})", "d"));
}

// ---- the retries, on a ManualClock with injected pass results

class StartupTaintRemovalTest : public ::testing::Test {
 protected:
  // Each pass takes the next queued result (kNotRegistered when none is queued), at once, or
  // holds its completion when `hold_` is set.
  StartupTaintRemoval& Make() {
    removal_ = std::make_unique<StartupTaintRemoval>(
        &clock_,
        StartupTaintRemoval::Options{.node_name = "worker-1", .driver_name = "csi.oxide.computer"},
        [this](StartupTaintRemoval::StepDone done) {
          if (hold_) {
            held_ = std::move(done);
            return;
          }
          StatusOr<TaintStep> next = TaintStep::kNotRegistered;
          if (!results_.empty()) {
            next = results_.front();
            results_.pop_front();
          }
          done(std::move(next));
        },
        [this](TaintStep step) {
          EXPECT_FALSE(finished_.has_value()) << "finished twice";
          finished_ = step;
        });
    return *removal_;
  }
  // The delays asked for between passes (the minute's report timer left out).
  std::vector<std::chrono::milliseconds> PassDelays() const {
    std::vector<std::chrono::milliseconds> delays;
    for (auto d : clock_.delays_started()) {
      if (d != 60s) delays.push_back(d);
    }
    return delays;
  }
  std::string Log() const { return log_.Text(); }

  testing::LogCapture log_;
  testing::ManualClock clock_;
  std::deque<StatusOr<TaintStep>> results_;
  bool hold_ = false;
  StartupTaintRemoval::StepDone held_;
  std::unique_ptr<StartupTaintRemoval> removal_;
  std::optional<TaintStep> finished_;
};

TEST_F(StartupTaintRemovalTest, ANodeWithoutTheTaintFinishesAfterOnePass) {
  results_ = {TaintStep::kAbsent};
  StartupTaintRemoval& removal = Make();
  removal.Start();
  ASSERT_TRUE(finished_.has_value());
  EXPECT_EQ(*finished_, TaintStep::kAbsent);
  EXPECT_EQ(removal.passes(), 1);
  EXPECT_FALSE(removal.running());
  EXPECT_EQ(clock_.pending_timers(), 0U);
  EXPECT_NE(Log().find("does not carry the startup taint"), std::string::npos) << Log();
}

TEST_F(StartupTaintRemovalTest, WaitsForTheRegistrationBackingOffFromOneSecondToTen) {
  StartupTaintRemoval& removal = Make();
  removal.Start();
  clock_.Advance(45s);
  EXPECT_FALSE(finished_.has_value());
  EXPECT_EQ(PassDelays(),
            (std::vector<std::chrono::milliseconds>{1s, 2s, 4s, 8s, 10s, 10s, 10s, 10s}));
  EXPECT_EQ(removal.passes(), 8);  // at 0, 1, 3, 7, 15, 25, 35, 45 s
  EXPECT_EQ(log_.Count("waiting for node-driver-registrar to register csi.oxide.computer on "
                       "Node worker-1"),
            1)
      << Log();
  // A minute on, one line says it still waits and what to look at.
  clock_.Advance(15s);
  EXPECT_EQ(log_.Count("still waiting for node-driver-registrar"), 1) << Log();
  EXPECT_NE(Log().find("kubectl get csinode worker-1"), std::string::npos) << Log();
  // Registered: the next pass removes the taint, and nothing is left running.
  results_ = {TaintStep::kRemoved};
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(finished_.has_value());
  EXPECT_EQ(*finished_, TaintStep::kRemoved);
  EXPECT_EQ(clock_.pending_timers(), 0U);
  EXPECT_NE(Log().find("removed the startup taint csi.oxide.computer/agent-not-ready from Node "
                       "worker-1"),
            std::string::npos)
      << Log();
}

TEST_F(StartupTaintRemovalTest, AConflictRereadsAfterOneSecondAndBacksOffIfItRepeats) {
  StartupTaintRemoval& removal = Make();
  removal.Start();
  clock_.Advance(15s);  // passes at 0, 1, 3, 7, 15 s: the next in 10 s
  results_ = {TaintStep::kConflict, TaintStep::kConflict, TaintStep::kConflict,
              TaintStep::kRemoved};
  const size_t before = PassDelays().size();
  clock_.Advance(10s);  // a conflict: 1 s, then 2 s, then 4 s
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  std::vector<std::chrono::milliseconds> delays = PassDelays();
  EXPECT_EQ(std::vector<std::chrono::milliseconds>(delays.begin() + before, delays.end()),
            (std::vector<std::chrono::milliseconds>{1s, 2s, 4s}));
  ASSERT_TRUE(finished_.has_value());
  EXPECT_EQ(*finished_, TaintStep::kRemoved);
  EXPECT_EQ(removal.passes(), 9);
}

TEST_F(StartupTaintRemovalTest, AFailureIsLoggedOnceWithWhatToDoAndRetriedNeverFatal) {
  // (No quotes: a field's value is written JSON-escaped.)
  const std::string forbidden =
      "PATCH /api/v1/nodes/worker-1: HTTP 403: the service account lacks RBAC patch on nodes";
  for (int i = 0; i < 10; ++i)
    results_.push_back(Status(StatusCode::kPermissionDenied, forbidden));
  StartupTaintRemoval& removal = Make();
  removal.Start();
  clock_.Advance(59s);
  EXPECT_TRUE(removal.running());
  EXPECT_FALSE(finished_.has_value());
  EXPECT_EQ(log_.Count(forbidden), 1) << Log();  // not once per retry
  EXPECT_NE(Log().find("cannot remove the startup taint csi.oxide.computer/agent-not-ready from "
                       "Node worker-1 yet"),
            std::string::npos)
      << Log();
  clock_.Advance(1s);  // the minute's line repeats the last error
  EXPECT_EQ(log_.Count("still cannot remove the startup taint from Node worker-1"), 1) << Log();
  EXPECT_EQ(log_.Count(forbidden), 2) << Log();
}

TEST_F(StartupTaintRemovalTest, StopEndsTheRetriesAndAPassCompletingLaterDoesNothing) {
  hold_ = true;
  StartupTaintRemoval& removal = Make();
  removal.Start();
  ASSERT_TRUE(held_);
  removal.Stop();
  EXPECT_EQ(clock_.pending_timers(), 0U);
  held_(TaintStep::kRemoved);
  EXPECT_FALSE(finished_.has_value());
  EXPECT_EQ(clock_.pending_timers(), 0U);
  // After the object is gone, too.
  removal_->Start();
  StartupTaintRemoval::StepDone late = std::move(held_);
  removal_.reset();
  late(TaintStep::kRemoved);
  EXPECT_FALSE(finished_.has_value());
}

}  // namespace
}  // namespace oxide::node
