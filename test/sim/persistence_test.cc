// --state-db: everything survives a restart, including a SIGKILL mid-transition
// (interrupted sagas complete forward on restart, as Nexus saga recovery does).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "sim_fixture.h"
#include "wait_until.h"

namespace sim_test {
namespace {

std::string fresh_db(const std::string& name) {
  const std::string path =
      testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  return path;
}

TEST(Persistence, EverythingSurvivesARestart) {
  const std::string db = fresh_db("restart");
  std::string disk_id, snapshot_id, instance_id;
  {
    SimProcess sim({"--state-db", db});
    HttpClient client(sim.base_url());
    disk_id = client.post("/v1/disks?project=demo", blank_disk("pv-a", 5)).json()["id"];
    snapshot_id = client
                      .post("/v1/snapshots?project=demo",
                            {{"name", "snap"}, {"description", ""}, {"disk", "pv-a"}})
                      .json()["id"];
    instance_id = client
                      .post("/__sim/instances",
                            {{"project", "demo"}, {"name", "vm"}, {"run_state", "stopped"}})
                      .json()["id"];
    ASSERT_EQ(client.post("/v1/instances/vm/disks/attach?project=demo", {{"disk", "pv-a"}}).status,
              202);
    ASSERT_EQ(client.put("/__sim/config", {{"storage_quota", 100 * kGiB}}).status, 200);
    EXPECT_EQ(sim.stop(), 0);
  }
  SimProcess sim({"--state-db", db});
  HttpClient client(sim.base_url());
  const nlohmann::json disk = client.get("/v1/disks/" + disk_id).json();
  EXPECT_EQ(disk["name"], "pv-a");
  EXPECT_EQ(disk["state"]["state"], "attached");
  EXPECT_EQ(disk["state"]["instance"], instance_id);
  EXPECT_EQ(client.get("/v1/snapshots/" + snapshot_id).json()["state"], "ready");
  EXPECT_EQ(client.get("/v1/instances/" + instance_id).json()["run_state"], "stopped");
  const nlohmann::json usage = client.get("/v1/utilization").json();
  EXPECT_EQ(usage["capacity"]["storage"], 100 * kGiB);
  EXPECT_EQ(usage["provisioned"]["storage"], 10 * kGiB);
  EXPECT_EQ(client.get("/v1/projects/demo").status, 200);
}

TEST(Persistence, SigkillMidCreateLeavesValidStates) {
  const std::string db = fresh_db("sigkill");
  {
    // The manual clock never advances here: the cut-off transitions cannot finish before the kill.
    SimProcess sim({"--state-db", db, "--manual-clock", "--instance-delay-ms", "5000"});
    HttpClient client(sim.base_url());
    client.post("/__sim/instances",
                {{"project", "demo"}, {"name", "vm"}, {"run_state", "stopped"}});
    ASSERT_EQ(client.post("/v1/disks?project=demo", blank_disk("done")).status, 201);
    ASSERT_EQ(client.put("/__sim/config", {{"create_delay_ms", 5000}}).status, 200);
    auto slow_disk = std::async(std::launch::async, [&]() {
      HttpClient other(sim.base_url());
      return other.post("/v1/disks?project=demo", blank_disk("cut-off"));
    });
    auto slow_snapshot = std::async(std::launch::async, [&]() {
      HttpClient other(sim.base_url());
      return other.post("/v1/snapshots?project=demo",
                        {{"name", "snap"}, {"description", ""}, {"disk", "done"}});
    });
    ASSERT_TRUE(WaitUntil(
        [&]() {
          return client.get("/v1/disks/cut-off?project=demo").status == 200 &&
                 client.get("/v1/snapshots/snap?project=demo").status == 200;
        },
        std::chrono::milliseconds(10000), "the slow disk and snapshot creates to reach the sim"));
    client.post("/v1/instances/vm/start?project=demo", nlohmann::json::object());
    EXPECT_EQ(client.get("/v1/disks/cut-off?project=demo").json()["state"]["state"], "creating");
    EXPECT_EQ(client.get("/v1/disks/done?project=demo").json()["state"]["state"], "maintenance");
    EXPECT_EQ(client.get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
    sim.kill_hard();
    EXPECT_NE(slow_disk.get().curl_code, CURLE_OK);
    EXPECT_NE(slow_snapshot.get().curl_code, CURLE_OK);
  }
  SimProcess sim({"--state-db", db});
  HttpClient client(sim.base_url());
  EXPECT_EQ(client.get("/v1/disks/cut-off?project=demo").json()["state"]["state"], "detached");
  EXPECT_EQ(client.get("/v1/disks/done?project=demo").json()["state"]["state"], "detached");
  EXPECT_EQ(client.get("/v1/snapshots/snap?project=demo").json()["state"], "ready");
  EXPECT_EQ(client.get("/v1/instances/vm?project=demo").json()["run_state"], "running");
  EXPECT_EQ(client.del("/v1/disks/cut-off?project=demo").status, 204);
}

TEST(Persistence, FrozenResourcesStayFrozenAcrossRestart) {
  const std::string db = fresh_db("frozen");
  {
    SimProcess sim({"--state-db", db, "--async"});
    HttpClient client(sim.base_url());
    client.post("/__sim/freeze", {{"kind", "disk"}, {"name", "held"}});
    EXPECT_EQ(client.post("/v1/disks?project=demo", blank_disk("held")).status, 201);
    sim.kill_hard();
  }
  SimProcess sim({"--state-db", db});
  HttpClient client(sim.base_url());
  EXPECT_EQ(client.get("/v1/disks/held?project=demo").json()["state"]["state"], "creating");
  client.post("/__sim/release", {{"kind", "disk"}, {"name", "held"}});
  EXPECT_EQ(client.get("/v1/disks/held?project=demo").json()["state"]["state"], "detached");
}

}  // namespace
}  // namespace sim_test
