// Instances: create/view/list/update/delete/start/stop and the attach/detach decision
// order (README §9), including --hotplug.
#include "sim_fixture.h"

namespace sim_test {
namespace {

using InstanceTest = SimTest;

nlohmann::json instance_body(const std::string& name, bool start = true) {
  return {{"name", name}, {"description", ""},  {"hostname", name},
          {"ncpus", 2},   {"memory", 2 * kGiB}, {"start", start}};
}

nlohmann::json update_body(int ncpus, uint64_t memory, nlohmann::json boot_disk = nullptr) {
  return {{"ncpus", ncpus},
          {"memory", memory},
          {"boot_disk", std::move(boot_disk)},
          {"auto_restart_policy", nullptr},
          {"cpu_platform", nullptr},
          {"enable_jumbo_frames", false}};
}

TEST_F(InstanceTest, CreateStartsAndStopFlows) {
  Reply made = api().post("/v1/instances?project=demo", instance_body("web"));
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.json()["run_state"], "starting");
  EXPECT_EQ(made.json()["ncpus"], 2);
  EXPECT_EQ(api().get("/v1/instances/web?project=demo").json()["run_state"], "running");
  Reply stop = api().post("/v1/instances/web/stop?project=demo", nlohmann::json::object());
  EXPECT_EQ(stop.status, 202);
  EXPECT_EQ(stop.json()["run_state"], "stopping");
  EXPECT_EQ(api().get("/v1/instances/web?project=demo").json()["run_state"], "stopped");
  EXPECT_EQ(api().post("/v1/instances/web/stop?project=demo", nlohmann::json::object()).status,
            202);
  Reply start = api().post("/v1/instances/web/start?project=demo", nlohmann::json::object());
  EXPECT_EQ(start.status, 202);
  EXPECT_EQ(start.json()["run_state"], "starting");
  EXPECT_EQ(api().post("/v1/instances/web/start?project=demo", nlohmann::json::object()).status,
            202);
  Reply quiet = api().post("/v1/instances?project=demo", instance_body("quiet", false));
  EXPECT_EQ(quiet.json()["run_state"], "stopped");
  EXPECT_EQ(api().get("/v1/instances?project=demo").json()["items"].size(), 2U);
  expect_error(api().post("/v1/instances?project=demo", instance_body("web")), 400,
               "ObjectAlreadyExists", "already exists: instance \"web\"");
}

TEST_F(InstanceTest, StartStopErrors) {
  control_instance("failed-node", "failed");
  expect_error(api().post("/v1/instances/failed-node/start?project=demo", nlohmann::json::object()),
               409, "Conflict", "instance is in state failed but it must be stopped to be started");
  Reply stop = api().post("/v1/instances/failed-node/stop?project=demo", nlohmann::json::object());
  EXPECT_EQ(stop.json()["run_state"], "stopped");
  control_instance("stopping-node", "stopping");
  expect_error(
      api().post("/v1/instances/stopping-node/start?project=demo", nlohmann::json::object()), 409,
      "Conflict", "instance must finish stopping before it can be started");
  control_instance("new-node", "creating");
  expect_error(api().post("/v1/instances/new-node/stop?project=demo", nlohmann::json::object()),
               400, "InvalidRequest",
               "cannot change instance state while it is still being created");
  control_instance("gone-node", "destroyed");
  expect_error(api().post("/v1/instances/gone-node/stop?project=demo", nlohmann::json::object()),
               400, "InvalidRequest", "instance state cannot be changed from destroyed");
}

TEST_F(InstanceTest, CreateValidation) {
  nlohmann::json body = instance_body("big");
  body["memory"] = kGiB / 2;
  expect_error(api().post("/v1/instances?project=demo", body), 400, "InvalidValue",
               "unsupported value for \"size\": memory must be at least 1 GiB");
  body = instance_body("many");
  body["disks"] = nlohmann::json::array();
  for (int i = 0; i < 13; ++i)
    body["disks"].push_back({{"type", "attach"}, {"name", "d" + std::to_string(i)}});
  expect_error(api().post("/v1/instances?project=demo", body), 400, "InvalidRequest",
               "cannot attach more than 12 disks to instance");
  body = instance_body("x");
  body.erase("hostname");
  expect_error(api().post("/v1/instances?project=demo", body), 400, nullptr,
               "unable to parse JSON body: missing field `hostname`");
  expect_error(api().post("/v1/instances", instance_body("x")), 400, nullptr,
               "unable to parse query string: missing field `project`");
}

TEST_F(InstanceTest, CreateWithDisks) {
  create_disk("existing");
  nlohmann::json body = instance_body("vm", false);
  body["boot_disk"] = {
      {"type", "create"},
      {"name", "boot"},
      {"description", ""},
      {"size", 2 * kGiB},
      {"disk_backend",
       {{"type", "distributed"}, {"disk_source", {{"type", "blank"}, {"block_size", 512}}}}}};
  body["disks"] = {{{"type", "attach"}, {"name", "existing"}}};
  Reply made = api().post("/v1/instances?project=demo", body);
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string id = made.json()["id"];
  const std::string boot_id = made.json()["boot_disk_id"];
  Reply disks = api().get("/v1/instances/" + id + "/disks");
  ASSERT_EQ(disks.status, 200);
  ASSERT_EQ(disks.json()["items"].size(), 2U);
  EXPECT_EQ(disks.json()["items"][0]["name"], "boot");
  EXPECT_EQ(disks.json()["items"][0]["id"], boot_id);
  expect_error(api().post("/v1/instances/vm/disks/detach?project=demo", {{"disk", "boot"}}), 409,
               "Conflict", "boot disk cannot be detached");
  // Deleting the instance detaches its disks.
  ASSERT_EQ(api().del("/v1/instances/vm?project=demo").status, 204);
  EXPECT_EQ(disk_state("boot"), nlohmann::json({{"state", "detached"}}));
  EXPECT_EQ(disk_state("existing"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(InstanceTest, UpdateRules) {
  control_instance("vm", "running");
  expect_error(api().put("/v1/instances/vm?project=demo", update_body(4, 4 * kGiB)), 400,
               "InvalidRequest", "instance must be stopped to change CPU or memory");
  Reply same = api().put("/v1/instances/vm?project=demo", update_body(2, 4 * kGiB));
  EXPECT_EQ(same.status, 200) << same.body;
  nlohmann::json missing = update_body(2, 4 * kGiB);
  missing.erase("cpu_platform");
  expect_error(api().put("/v1/instances/vm?project=demo", missing), 400, nullptr,
               "unable to parse JSON body: missing field `cpu_platform`");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "stopped"}}).status, 200);
  create_disk("root");
  attach("vm", "root");
  nlohmann::json update = update_body(8, 16 * kGiB, "root");
  update["auto_restart_policy"] = "never";
  Reply updated = api().put("/v1/instances/vm?project=demo", update);
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(updated.json()["ncpus"], 8);
  EXPECT_EQ(updated.json()["auto_restart_enabled"], false);
  EXPECT_FALSE(updated.json()["boot_disk_id"].is_null());
}

TEST_F(InstanceTest, DeleteRules) {
  control_instance("vm", "running");
  expect_error(api().del("/v1/instances/vm?project=demo"), 400, "InvalidRequest",
               "cannot delete instance: instance is running or has not yet fully stopped");
  expect_error(api().get("/v1/instances/vm"), 400, "InvalidRequest",
               "instance should either be UUID or project should be specified");
  const std::string id = api().get("/v1/instances/vm?project=demo").json()["id"];
  expect_error(api().get("/v1/instances/" + id + "?project=demo"), 400, "InvalidRequest",
               "when providing instance as an ID project should not be specified");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "failed"}}).status, 200);
  EXPECT_EQ(api().del("/v1/instances/" + id).status, 204);
  expect_error(api().get("/v1/instances/" + id), 404, "ObjectNotFound",
               "not found: instance with id \"" + id + "\"");
}

TEST_F(InstanceTest, AttachDecisionOrder) {
  create_disk("pv-a");
  create_disk("pv-b");
  control_instance("vm", "stopped");
  control_instance("other", "stopped");
  control_instance("live", "running");
  control_instance("broken", "failed");
  const nlohmann::json attached = attach("vm", "pv-a");
  EXPECT_EQ(attached["state"]["state"], "attached");
  EXPECT_EQ(attached["state"]["instance"], api().get("/v1/instances/vm?project=demo").json()["id"]);
  attach("vm", "pv-a");  // idempotent
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "running"}}).status, 200);
  attach("vm", "pv-a");  // idempotent even while running
  auto attach_reply = [&](const std::string& instance, const std::string& disk) {
    return api().post("/v1/instances/" + instance + "/disks/attach?project=demo", {{"disk", disk}});
  };
  expect_error(attach_reply("live", "pv-b"), 400, "InvalidRequest",
               "cannot attach disk: instance is not fully stopped");
  expect_error(attach_reply("broken", "pv-b"), 400, "InvalidRequest",
               "cannot attach disk to instance in failed state");
  expect_error(attach_reply("other", "pv-a"), 400, "InvalidRequest",
               "cannot attach disk \"pv-a\": disk is attached to another instance");
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "disk"}, {"name", "pv-b"}}).status, 200);
  expect_error(attach_reply("other", "pv-b"), 400, "InvalidRequest",
               "cannot attach disk \"pv-b\": invalid state faulted");
  expect_error(attach_reply("other", "nope"), 404, "ObjectNotFound",
               "not found: disk with name \"nope\"");
  ASSERT_EQ(api().post("/__sim/projects", {{"name", "elsewhere"}}).status, 201);
  const std::string foreign = create_disk("foreign", 1, 4096, "elsewhere")["id"];
  expect_error(attach_reply("other", foreign), 400, "InvalidRequest",
               "disk must be in the same project as the instance");
}

TEST_F(InstanceTest, TwelveDiskLimit) {
  control_instance("vm", "stopped");
  for (int i = 0; i < 12; ++i) {
    create_disk("d" + std::to_string(i));
    attach("vm", "d" + std::to_string(i));
  }
  create_disk("d12");
  expect_error(api().post("/v1/instances/vm/disks/attach?project=demo", {{"disk", "d12"}}), 400,
               "InvalidRequest", "cannot attach more than 12 disks to instance");
  EXPECT_EQ(api().get("/v1/instances/vm/disks?project=demo").json()["items"].size(), 12U);
}

TEST_F(InstanceTest, DetachDecisionOrder) {
  create_disk("pv-a");
  create_disk("pv-b");
  control_instance("vm", "stopped");
  control_instance("other", "stopped");
  auto detach_reply = [&](const std::string& instance, const std::string& disk) {
    return api().post("/v1/instances/" + instance + "/disks/detach?project=demo", {{"disk", disk}});
  };
  // Detached disk: 202 even though never attached here and the instance runs.
  control_instance("live", "running");
  Reply noop = detach_reply("live", "pv-b");
  EXPECT_EQ(noop.status, 202);
  EXPECT_EQ(noop.json()["state"], nlohmann::json({{"state", "detached"}}));
  attach("vm", "pv-a");
  expect_error(detach_reply("other", "pv-a"), 400, "InvalidRequest",
               "cannot detach disk \"pv-a\": disk is attached to another instance");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "running"}}).status, 200);
  expect_error(detach_reply("vm", "pv-a"), 400, "InvalidRequest",
               "cannot detach disk: instance is not fully stopped");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "repairing"}}).status, 200);
  expect_error(detach_reply("vm", "pv-a"), 400, "InvalidRequest",
               "cannot detach disk: instance is not fully stopped");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "destroyed"}}).status, 200);
  expect_error(detach_reply("vm", "pv-a"), 400, "InvalidRequest",
               "cannot detach disk from instance in destroyed state");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "stopped"}}).status, 200);
  Reply done = detach_reply("vm", "pv-a");
  EXPECT_EQ(done.status, 202);
  EXPECT_EQ(done.json()["state"], nlohmann::json({{"state", "detached"}}));
  EXPECT_EQ(detach_reply("vm", "pv-a").status, 202);
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "disk"}, {"name", "pv-b"}}).status, 200);
  expect_error(detach_reply("vm", "pv-b"), 400, "InvalidRequest",
               "cannot detach disk \"pv-b\": invalid state faulted");
}

class HotplugTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--hotplug"}; }
};

nlohmann::json local_disk(const std::string& name) {
  return {
      {"name", name}, {"description", ""}, {"size", kGiB}, {"disk_backend", {{"type", "local"}}}};
}

TEST_F(InstanceTest, ALocalDiskAttachesOnlyToAStoppedInstanceLikeAnyDisk) {
  ASSERT_EQ(api().post("/v1/disks?project=demo", local_disk("loc")).status, 201);
  control_instance("vm", "starting");
  expect_error(api().post("/v1/instances/vm/disks/attach?project=demo", {{"disk", "loc"}}), 400,
               "InvalidRequest", "cannot attach disk: instance is not fully stopped");
  control_instance("stopped-vm", "stopped");
  EXPECT_EQ(attach("stopped-vm", "loc")["state"]["state"], "attached");
}

TEST_F(HotplugTest, ALocalDiskCannotAttachWhileTheInstanceIsStarting) {
  ASSERT_EQ(api().post("/v1/disks?project=demo", local_disk("loc")).status, 201);
  create_disk("dist");
  control_instance("vm", "starting");
  expect_error(api().post("/v1/instances/vm/disks/attach?project=demo", {{"disk", "loc"}}), 409,
               "Conflict", "cannot attach local storage disk: instance is starting");
  EXPECT_EQ(disk_state("loc"), nlohmann::json({{"state", "detached"}}));
  EXPECT_EQ(attach("vm", "dist")["state"]["state"], "attached");
  control_instance("running-vm", "running");
  EXPECT_EQ(attach("running-vm", "loc")["state"]["state"], "attached");
}

TEST_F(HotplugTest, AttachAndDetachWhileRunning) {
  create_disk("pv-a");
  control_instance("vm", "running");
  EXPECT_EQ(attach("vm", "pv-a")["state"]["state"], "attached");
  Reply detached = api().post("/v1/instances/vm/disks/detach?project=demo", {{"disk", "pv-a"}});
  EXPECT_EQ(detached.status, 202);
  EXPECT_EQ(detached.json()["state"]["state"], "detached");
}

}  // namespace
}  // namespace sim_test
