// Crash test: 200 volumes driven by a retrying client while the real plugin is SIGKILLed and
// restarted; afterwards the simulator's disks and the plugin's journal must match exactly.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "support/controller_rig.h"
#include "support/volume_driver.h"

namespace oxide::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kVolumes = 200;
constexpr int kInstances = 30;  // ≤ 7 volumes each: below Oxide's 12 disks per instance
constexpr int kMinKills = 8;

uint64_t ChooseSeed() {
  if (const char* text = std::getenv("OXIDE_CRASH_SEED"); text != nullptr && *text != '\0') {
    return std::strtoull(text, nullptr, 10);
  }
  return std::random_device{}();
}

// Kills the plugin with SIGKILL at random moments and restarts it at once on the same database
// and socket, until stopped. Runs on its own thread; owns the plugin process meanwhile.
class Killer {
 public:
  Killer(ControllerRig* rig, std::unique_ptr<PluginProcess> plugin, const VolumeDriver* driver,
         uint64_t seed)
      : rig_(rig), plugin_(std::move(plugin)), driver_(driver), rng_(seed) {}

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  // Stops killing and hands the (running) plugin back.
  std::unique_ptr<PluginProcess> Stop() {
    stop_ = true;
    thread_.join();
    return std::move(plugin_);
  }
  int kills() const { return kills_; }
  int mid_operation_kills() const { return mid_operation_kills_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void Loop() {
    std::uniform_int_distribution<int> pause_ms(300, 1000);
    while (!stop_) {
      auto wake = Clock::now() + milliseconds(pause_ms(rng_));
      while (!stop_ && Clock::now() < wake)
        std::this_thread::sleep_for(milliseconds(10));
      if (stop_) return;
      if (!plugin_->running()) {
        problems_.push_back("the plugin exited by itself before kill " +
                            std::to_string(kills_ + 1) + " (see its log)");
      }
      size_t in_flight = driver_->in_flight();
      plugin_->Signal(SIGKILL);
      plugin_->WaitExit(std::chrono::seconds(10));
      ++kills_;
      if (in_flight > 0) ++mid_operation_kills_;
      std::cout << "kill " << kills_ << ": " << in_flight << " calls in flight, "
                << driver_->done_count() << " volumes done" << std::endl;
      plugin_.reset();
      plugin_ = rig_->LaunchPlugin();
      if (!plugin_->WaitServing(rig_->plugin().socket_path())) {
        problems_.push_back("the plugin did not serve again after kill " + std::to_string(kills_));
        return;
      }
    }
  }

  ControllerRig* rig_;
  std::unique_ptr<PluginProcess> plugin_;
  const VolumeDriver* driver_;
  std::mt19937_64 rng_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int kills_ = 0;
  int mid_operation_kills_ = 0;
  std::vector<std::string> problems_;
};

TEST(ControllerCrash, SigkillWhileTwoHundredVolumesComeAndGo) {
  const uint64_t seed = ChooseSeed();
  std::cout << "crash test seed " << seed << " (rerun with OXIDE_CRASH_SEED=" << seed << ")"
            << std::endl;
  const auto started = Clock::now();

  // Oxide latency 100–200 ms per request, so the plugin is killed with operations in every stage
  // and the client runs long enough (10–20 s) for well over kMinKills kills every 0.3–1 s.
  ControllerRig rig("crash", {"--fault", "*:latency_ms=100,jitter_ms=100", "--fault-seed",
                              std::to_string(seed % 1000000)});
  ASSERT_TRUE(rig.sim().running());
  std::vector<std::string> nodes = rig.CreateStoppedInstances(kInstances, "node");
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kInstances)) << "cannot create the instances";

  // Even volumes end "exists, unpublished"; odd ones end deleted.
  std::vector<VolumePlan> plans;
  for (int i = 0; i < kVolumes; ++i) {
    plans.push_back({.name = "crash-vol-" + std::to_string(i),
                     .node_id = nodes[static_cast<size_t>(i % kInstances)],
                     .last = i % 2 == 0 ? VolumeStep::kUnpublish : VolumeStep::kDelete});
  }

  std::unique_ptr<PluginProcess> plugin = rig.LaunchPlugin();
  ASSERT_TRUE(plugin->WaitServing(rig.plugin().socket_path())) << plugin->Log();

  VolumeDriver driver(ReconnectingUnixChannel(rig.plugin().socket_path()), plans,
                      {.deadline = milliseconds(2000),
                       .backoff_first = milliseconds(100),
                       .backoff_max = milliseconds(2000),
                       .concurrency = 0,
                       .seed = seed});
  Killer killer(&rig, std::move(plugin), &driver, seed ^ 0x9e3779b97f4a7c15ull);
  killer.Start();
  bool all_done = driver.Run(std::chrono::seconds(150));
  plugin = killer.Stop();
  const double drive_s = std::chrono::duration<double>(Clock::now() - started).count();
  std::cout << "client finished after " << drive_s << " s: " << driver.done_count() << "/"
            << kVolumes << " volumes done, " << killer.kills() << " kills ("
            << killer.mid_operation_kills() << " with calls in flight)" << std::endl;
  for (int step = 0; step < kVolumeSteps; ++step) {
    const StepStats& stats = driver.stats(static_cast<VolumeStep>(step));
    std::cout << "  " << VolumeStepName(static_cast<VolumeStep>(step)) << ": " << stats.attempts
              << " attempts;";
    for (const auto& [code, count] : stats.errors)
      std::cout << " " << code << "=" << count;
    std::cout << std::endl;
  }
  for (const std::string& problem : killer.problems())
    ADD_FAILURE() << problem << "\nplugin log:\n" << plugin->Log();
  if (!all_done) {
    std::ostringstream stuck;
    for (size_t i = 0; i < plans.size(); ++i) {
      const VolumeResult& result = driver.results()[i];
      if (result.reached != VolumeStep::kDone) {
        stuck << "  " << plans[i].name << " stuck at " << VolumeStepName(result.reached)
              << ", last error " << result.last_error << "\n";
      }
    }
    ADD_FAILURE() << "the client did not finish every volume:\n" << stuck.str();
  }
  EXPECT_GE(killer.kills(), kMinKills) << "the client finished before enough kills";
  EXPECT_GE(killer.mid_operation_kills(), 3) << "too few kills landed with calls in flight";

  // A clean stop, then one more start so recovery reconciles whatever the last kill left.
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(std::chrono::seconds(20)), 0) << "SIGTERM did not stop the plugin";
  plugin.reset();
  plugin = rig.LaunchPlugin();
  ASSERT_TRUE(plugin->WaitServing(rig.plugin().socket_path())) << plugin->Log();
  // The database is locked while the plugin runs (locking_mode=EXCLUSIVE), so wait until
  // recovery is over (it logs every entry it closes: its log stays quiet for 3 s), then stop.
  const size_t log_before = plugin->Log().size();
  auto quiet_since = Clock::now();
  size_t log_size = log_before;
  for (auto limit = Clock::now() + std::chrono::seconds(60);
       Clock::now() < limit && Clock::now() - quiet_since < std::chrono::seconds(3);) {
    std::this_thread::sleep_for(milliseconds(100));
    if (size_t now = plugin->Log().size(); now != log_size) {
      log_size = now;
      quiet_since = Clock::now();
    }
  }
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(std::chrono::seconds(20)), 0) << "SIGTERM did not stop the plugin";
  const std::string db = rig.plugin().state_db();
  std::string db_error;
  auto pending_count = [&] {
    auto rows =
        SqliteQuery(db, "SELECT count(*) FROM operations WHERE state = 'pending'", &db_error);
    return rows.empty() ? -1 : std::stoi(rows[0][0]);
  };
  const std::string log = plugin->Log().substr(log_before);
  plugin.reset();  // also checks the log for sanitizer reports

  // The simulator: exactly one detached disk per surviving volume, nothing else.
  std::map<std::string, std::string> expected;  // CSI name -> volume id of survivors
  std::set<std::string> deleted;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].last == VolumeStep::kDelete) {
      deleted.insert(plans[i].name);
    } else {
      expected[plans[i].name] = driver.results()[i].volume_id;
    }
  }
  std::string list_error;
  std::vector<nlohmann::json> disks = rig.ListDisks(&list_error);
  ASSERT_TRUE(list_error.empty()) << list_error;
  std::ostringstream wrong;
  std::map<std::string, int> seen;
  for (const nlohmann::json& disk : disks) {
    std::string description = disk.value("description", "");
    std::string state = disk["state"].value("state", "");
    std::string id = disk.value("id", "");
    std::string owner;
    if (auto open = description.find('"'), close = description.find('"', open + 1);
        open != std::string::npos && close != std::string::npos) {
      owner = description.substr(open + 1, close - open - 1);
    }
    if (expected.count(owner) != 0) {
      if (++seen[owner] > 1) wrong << "  duplicate disk " << id << " for " << owner << "\n";
      if (id != expected[owner]) {
        wrong << "  disk " << id << " of " << owner << " is not the volume the client got ("
              << expected[owner] << ")\n";
      }
    } else if (deleted.count(owner) != 0) {
      wrong << "  leaked disk " << id << " (" << state << ") of deleted volume " << owner << "\n";
    } else {
      wrong << "  unexpected disk " << id << " \"" << disk.value("name", "") << "\" ("
            << description << ")\n";
    }
    if (state != "detached") wrong << "  disk " << id << " of " << owner << " is " << state << "\n";
  }
  for (const auto& [name, id] : expected) {
    if (seen.count(name) == 0) wrong << "  no disk for surviving volume " << name << "\n";
  }
  EXPECT_TRUE(wrong.str().empty())
      << "the simulator's disks are wrong (" << disks.size() << " disks):\n"
      << wrong.str();

  // The journal: every entry closed; the volumes table holds exactly the survivors, CREATED.
  EXPECT_EQ(pending_count(), 0) << "journal entries still pending after recovery " << db_error
                                << "\nplugin log of the last start:\n"
                                << log;
  auto pending = SqliteQuery(
      db, "SELECT id, kind, volume, args FROM operations WHERE state = 'pending'", &db_error);
  for (const auto& row : pending)
    ADD_FAILURE() << "pending journal entry " << row[0] << " " << row[1] << " " << row[2] << " "
                  << row[3];
  auto volumes =
      SqliteQuery(db, "SELECT co_name, volume_id, state, node_id FROM volumes", &db_error);
  EXPECT_TRUE(db_error.empty()) << db_error;
  std::ostringstream table;
  std::set<std::string> rows_seen;
  for (const auto& row : volumes) {
    const std::string& name = row[0];
    if (!rows_seen.insert(name).second) table << "  two rows for " << name << "\n";
    if (expected.count(name) == 0) {
      table << "  row for " << name << " (" << row[2] << ") which should not exist\n";
      continue;
    }
    if (row[1] != expected[name]) table << "  " << name << " has volume id " << row[1] << "\n";
    if (row[2] != "CREATED" || !row[3].empty()) {
      table << "  " << name << " is " << row[2] << " on node '" << row[3] << "'\n";
    }
  }
  for (const auto& [name, id] : expected) {
    if (rows_seen.count(name) == 0) table << "  no row for surviving volume " << name << "\n";
  }
  EXPECT_TRUE(table.str().empty()) << "the plugin's volumes table is wrong:\n" << table.str();
  std::cout << "crash test: seed " << seed << ", " << killer.kills() << " kills ("
            << killer.mid_operation_kills() << " mid-operation), "
            << std::chrono::duration<double>(Clock::now() - started).count() << " s in all"
            << std::endl;
}

}  // namespace
}  // namespace oxide::testing
