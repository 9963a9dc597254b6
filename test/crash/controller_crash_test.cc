// Crash test: 200 volumes driven by a retrying client while the real plugin is SIGKILLed and
// restarted; afterwards the simulator's disks and the plugin's journal must match exactly.
//
// A SIGKILL loses no answered write: after every kill, once the process is gone and before the
// restart, the state database (read-only; quiescent) must hold every call the killed process
// answered OK. The reference for each volume is its last call answered OK: those the client had
// taken when the kill was sent, plus those it took from the socket after (only the killed process
// can have sent them). After CreateVolume the volume has a row with the id it got, not CREATING;
// after ControllerPublishVolume it is NODE_READY on the node; after ControllerUnpublishVolume
// CREATED; after DeleteVolume it has no row. The next call of the volume may have begun (its first
// write) or ended with its answer unread, so its states are allowed too, but nothing beyond: the
// client sends a call only after it took the previous answer. In the journal, no entry of an
// answered call is still pending, and a create, publish or delete answered OK has a 'done' entry
// (keys: the disk name for create, the volume id otherwise). A plugin answering before its
// writes are durable fails this when a kill lands between the answer and the commit, so three
// kills in four are sent right after the client takes an answer (from its thread, at once).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "support/controller_rig.h"
#include "support/volume_driver.h"
#include "support/wait_until.h"

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

// Every call the client saw answered OK, in the order it took them; it also sends the kills, so
// that which answers came before a kill is exact. Any thread.
class AnswerLog {
 public:
  // On the client's thread, as it takes an answer.
  void Add(const AnsweredCall& call) {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(call);
    if (armed_pid_ > 0) {
      ::kill(armed_pid_, SIGKILL);
      armed_pid_ = 0;
      killed_after_ = calls_.size();
      fired_.notify_all();
    }
  }
  // SIGKILLs `pid` (alive or not yet reaped) at once; returns how many answers came before.
  size_t KillNow(pid_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    ::kill(pid, SIGKILL);
    return calls_.size();
  }
  // SIGKILLs `pid` from the client's thread as soon as it has taken the next answer (within
  // microseconds), or after `limit` without one; returns how many answers came before.
  size_t KillAfterNextAnswer(pid_t pid, milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    armed_pid_ = pid;
    if (fired_.wait_for(lock, limit, [&] { return armed_pid_ == 0; })) return killed_after_;
    armed_pid_ = 0;
    ::kill(pid, SIGKILL);
    return calls_.size();
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_.size();
  }
  std::vector<AnsweredCall> Snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable fired_;
  std::vector<AnsweredCall> calls_;
  pid_t armed_pid_ = 0;
  size_t killed_after_ = 0;
};

const char* JournalKind(VolumeStep step) {
  static constexpr const char* kKinds[] = {"create", "publish", "unpublish", "delete", ""};
  return kKinds[static_cast<int>(step)];
}

// What the durability check of one kill covered.
struct KillCheck {
  size_t volumes = 0;  // volumes with a call answered OK: their row checked
  size_t calls = 0;    // calls answered OK so far: their journal entries checked
  size_t late = 0;     // of those, answers the client took after the kill was sent
};

// Checks the state database of a killed plugin against the calls it answered OK: `answers[0,
// sent)` the client had taken when the kill was sent, the rest after (see the top comment).
// Appends what is wrong to `problems`.
KillCheck CheckAnsweredWritesKept(const std::string& db, const std::vector<VolumePlan>& plans,
                                  const std::vector<AnsweredCall>& answers, size_t sent,
                                  int kill_number, std::vector<std::string>* problems) {
  KillCheck check;
  const std::string at = "after kill " + std::to_string(kill_number) + ": ";
  std::string error;
  auto rows = SqliteQuery(db, "SELECT co_name, volume_id, state, node_id FROM volumes", &error);
  auto entries = SqliteQuery(db, "SELECT id, kind, volume, state, args FROM operations", &error);
  if (!error.empty()) {
    problems->push_back(at + "cannot read the state database: " + error);
    return check;
  }
  struct Row {
    std::string volume_id, state, node_id;
  };
  std::map<std::string, std::vector<Row>> rows_by_name;
  for (const auto& row : rows)
    rows_by_name[row[0]].push_back({row[1], row[2], row[3]});
  std::map<std::string, std::string> disk_of;  // CSI name -> disk name, from the create entries
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, std::string>>>
      entries_by_key;  // (kind, volume) -> (id, state)
  for (const auto& entry : entries) {
    entries_by_key[{entry[1], entry[2]}].push_back({entry[0], entry[3]});
    if (entry[1] == "create") {
      std::string co_name = nlohmann::json::parse(entry[4], nullptr, false).value("co_name", "");
      if (!co_name.empty()) disk_of[co_name] = entry[2];
    }
  }

  // Per volume: every step answered OK, and the last one.
  std::map<size_t, std::vector<const AnsweredCall*>> by_plan;
  for (size_t i = 0; i < answers.size(); ++i) {
    by_plan[answers[i].plan].push_back(&answers[i]);
    ++check.calls;
    if (i >= sent) ++check.late;
  }
  for (const auto& [index, calls] : by_plan) {
    ++check.volumes;
    const VolumePlan& plan = plans[index];
    const AnsweredCall& last = *calls.back();
    const std::string volume = plan.name + " (" + last.volume_id + ")";
    // The states the row may be in: the last answered step's, then the next call's: begun (its
    // first write), done with the answer unread, or done (by recovery) and begun again by a retry
    // (an unpublish then starts from CREATED: UNPUBLISHING with no node). nullopt: no row.
    struct Allowed {
      std::optional<std::string> state;
      std::string node_id;
    };
    const bool has_next = last.step != plan.last;
    std::vector<Allowed> allowed;
    switch (last.step) {
      case VolumeStep::kCreate:
        allowed = {{"CREATED", ""}};
        if (has_next) {
          allowed.insert(allowed.end(),
                         {{"PUBLISHING", plan.node_id}, {"NODE_READY", plan.node_id}});
        }
        break;
      case VolumeStep::kPublish:
        allowed = {{"NODE_READY", plan.node_id}};
        if (has_next) {
          allowed.insert(allowed.end(),
                         {{"UNPUBLISHING", plan.node_id}, {"CREATED", ""}, {"UNPUBLISHING", ""}});
        }
        break;
      case VolumeStep::kUnpublish:
        allowed = {{"CREATED", ""}};
        if (has_next) allowed.insert(allowed.end(), {{"DELETING", ""}, {std::nullopt, ""}});
        break;
      case VolumeStep::kDelete:
      case VolumeStep::kDone:
        allowed = {{std::nullopt, ""}};
        break;
    }
    const std::vector<Row>& found = rows_by_name[plan.name];
    std::string seen = "no row";
    bool ok = false;
    if (found.size() > 1) {
      seen = std::to_string(found.size()) + " rows";
    } else if (found.empty()) {
      for (const Allowed& a : allowed)
        ok = ok || !a.state;
    } else {
      const Row& row = found[0];
      seen = row.state + " on node '" + row.node_id + "' with volume id " + row.volume_id;
      for (const Allowed& a : allowed) {
        ok = ok || (a.state && *a.state == row.state && a.node_id == row.node_id &&
                    row.volume_id == last.volume_id);
      }
    }
    if (!ok) {
      std::string expected;
      for (const Allowed& a : allowed) {
        if (!expected.empty()) expected += " or ";
        expected += a.state ? *a.state + (a.node_id.empty() ? "" : " on " + a.node_id) : "no row";
      }
      problems->push_back(at + volume + " was answered " + VolumeStepName(last.step) +
                          " OK, but the state database has " + seen + " (expected " + expected +
                          ")");
    }

    // The journal: no entry of an answered call still pending; a 'done' one where there must be.
    for (const AnsweredCall* call : calls) {
      const std::string kind = JournalKind(call->step);
      const std::string key =
          call->step == VolumeStep::kCreate ? disk_of[plan.name] : call->volume_id;
      bool done = false;
      std::string listed;  // every entry of the key, for the message
      for (const auto& [id, state] : entries_by_key[{kind, key}])
        listed += " " + id + "=" + state;
      for (const auto& [id, state] : entries_by_key[{kind, key}]) {
        done = done || state == "done";
        if (state == "pending") {
          problems->push_back(at + volume + " was answered " + VolumeStepName(call->step) +
                              " OK, but its journal entry " + id + " is still pending (" + kind +
                              " entries:" + listed + ")");
        }
      }
      // An unpublish of a volume found detached answers without an entry.
      if (!done && call->step != VolumeStep::kUnpublish) {
        problems->push_back(at + volume + " was answered " + VolumeStepName(call->step) +
                            " OK, but the journal has no 'done' " + kind + " entry for it");
      }
    }
  }
  return check;
}

// Kills the plugin with SIGKILL at random moments and restarts it at once on the same database
// and socket, until stopped. Runs on its own thread; owns the plugin process meanwhile. Between
// a kill and the restart it checks that the database kept every answered write.
class Killer {
 public:
  Killer(ControllerRig* rig, std::unique_ptr<PluginProcess> plugin, const VolumeDriver* driver,
         AnswerLog* answers, const std::vector<VolumePlan>* plans, uint64_t seed)
      : rig_(rig),
        plugin_(std::move(plugin)),
        driver_(driver),
        answers_(answers),
        plans_(plans),
        rng_(seed) {}

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  // Stops killing and hands the (running) plugin back.
  std::unique_ptr<PluginProcess> Stop() {
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      stop_ = true;
    }
    stop_requested_.notify_all();
    thread_.join();
    return std::move(plugin_);
  }
  int kills() const { return kills_; }
  int mid_operation_kills() const { return mid_operation_kills_; }
  // Of the kills, those whose durability check ran, and what the checks covered in all.
  int checked_kills() const { return checked_kills_; }
  const KillCheck& checked() const { return checked_; }
  // What the checks found: writes of answered calls the database did not have.
  const std::vector<std::string>& lost_writes() const { return lost_writes_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void Loop() {
    std::uniform_int_distribution<int> pause_ms(300, 1000);
    while (!stop_) {
      // The pause is the fault schedule itself (a kill at a random moment), not a wait for an
      // event; Stop() ends it at once.
      {
        std::unique_lock<std::mutex> lock(stop_mutex_);
        const auto wake = Clock::now() + milliseconds(pause_ms(rng_));
        if (stop_requested_.wait_until(lock, wake, [this] { return stop_.load(); })) return;
      }
      const bool alive = plugin_->running();  // when not, it is reaped: its pid is not ours
      if (!alive) {
        problems_.push_back("the plugin exited by itself before kill " +
                            std::to_string(kills_ + 1) + " (see its log)");
      }
      // Three kills in four land right after the client took an answer: were the plugin to
      // answer before its writes are committed, the commit would likely still be under way.
      const bool after_answer = kills_ % 4 != 0;
      size_t in_flight = driver_->in_flight();
      size_t answered = answers_->size();
      if (alive) {
        answered = after_answer ? answers_->KillAfterNextAnswer(plugin_->pid(), milliseconds(500))
                                : answers_->KillNow(plugin_->pid());
      }
      plugin_->WaitExit(std::chrono::seconds(10));
      ++kills_;
      if (in_flight > 0) ++mid_operation_kills_;
      std::cout << "kill " << kills_ << (after_answer ? " (right after an answer)" : "") << ": "
                << in_flight << " calls in flight, " << driver_->done_count() << " volumes done";
      if (plugin_->running()) {
        problems_.push_back("the plugin still ran 10 s after kill " + std::to_string(kills_));
      } else {
        // Dead: its database is quiescent, and whatever the client takes from now on until the
        // restart was sent by the killed process.
        KillCheck check =
            CheckAnsweredWritesKept(rig_->plugin().state_db(), *plans_, answers_->Snapshot(),
                                    answered, kills_, &lost_writes_);
        ++checked_kills_;
        checked_.volumes += check.volumes;
        checked_.calls += check.calls;
        checked_.late += check.late;
        std::cout << "; checked " << check.volumes << " volumes, " << check.calls
                  << " answered calls (" << check.late << " taken after the kill)";
      }
      std::cout << std::endl;
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
  AnswerLog* answers_;
  const std::vector<VolumePlan>* plans_;
  std::mt19937_64 rng_;
  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_requested_;
  std::atomic<bool> stop_{false};
  int kills_ = 0;
  int mid_operation_kills_ = 0;
  int checked_kills_ = 0;
  KillCheck checked_;
  std::vector<std::string> lost_writes_;
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

  AnswerLog answers;
  VolumeDriver driver(ReconnectingUnixChannel(rig.plugin().socket_path()), plans,
                      {.deadline = milliseconds(2000),
                       .backoff_first = milliseconds(100),
                       .backoff_max = milliseconds(2000),
                       .concurrency = 0,
                       .seed = seed,
                       .on_answer = [&answers](const AnsweredCall& call) { answers.Add(call); }});
  Killer killer(&rig, std::move(plugin), &driver, &answers, &plans, seed ^ 0x9e3779b97f4a7c15ull);
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
  std::cout << "durability after SIGKILL: " << killer.checked_kills() << " of " << killer.kills()
            << " kills checked; " << killer.checked().volumes << " volume rows and "
            << killer.checked().calls << " answered calls checked in all (every kill checks every "
            << "answer so far; " << killer.checked().late << " taken after their kill)"
            << std::endl;
  EXPECT_GT(killer.checked().calls, 0u) << "no answered call was checked after a kill";
  EXPECT_EQ(killer.checked_kills(), killer.kills());
  std::ostringstream lost;
  for (const std::string& problem : killer.lost_writes())
    lost << "  " << problem << "\n";
  EXPECT_TRUE(killer.lost_writes().empty())
      << "the state database lacked writes of answered calls after a SIGKILL ("
      << killer.lost_writes().size() << " findings):\n"
      << lost.str();
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
  // What the last start has to reconcile: the volumes with journal entries still open. The
  // recovery closes each volume's newest entry with one "reconciled ..." record (the older
  // ones of that volume are closed as superseded, without one).
  const std::string db = rig.plugin().state_db();
  std::string db_error;
  size_t open_volumes = 0, open_snapshots = 0;
  for (const auto& row :
       SqliteQuery(db,
                   "SELECT substr(kind, 1, 9) = 'snapshot_', count(DISTINCT volume) FROM "
                   "operations WHERE state = 'pending' GROUP BY 1",
                   &db_error)) {
    (row[0] == "1" ? open_snapshots : open_volumes) = std::stoul(row[1]);
  }
  EXPECT_TRUE(db_error.empty()) << db_error;
  const size_t log_before = ReadFile(rig.plugin().log_path()).size();
  plugin = rig.LaunchPlugin();
  ASSERT_TRUE(plugin->WaitServing(rig.plugin().socket_path())) << plugin->Log();
  // The database is locked while the plugin runs (locking_mode=EXCLUSIVE): wait until the
  // recovery has logged every volume reconciled, then stop.
  auto count = [&](const std::string& text) {
    const std::string log = plugin->Log().substr(log_before);
    size_t found = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
      ++found;
    return found;
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        return count("msg=\"reconciled an unfinished operation\"") >= open_volumes &&
               count("msg=\"reconciled an unfinished snapshot operation\"") >= open_snapshots;
      },
      std::chrono::seconds(60), milliseconds(20)))
      << open_volumes << " volumes and " << open_snapshots
      << " snapshots to reconcile; the plugin's log:\n"
      << plugin->Log().substr(log_before);
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(std::chrono::seconds(20)), 0) << "SIGTERM did not stop the plugin";
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
