// ControllerRig: the sim and the plugin configuration for controller-level tests and benchmarks.
#include "support/controller_rig.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "http_client.h"
#include "support/temp_dir.h"

namespace oxide::testing {

ControllerRig::ControllerRig(const std::string& project, std::vector<std::string> sim_args)
    : project_(project),
      sim_([&] {
        sim_args.push_back("--project");
        sim_args.push_back(project);
        return sim_args;
      }()),
      plugin_("controller") {
  plugin_.args.push_back("--oxide-insecure");
  plugin_.env = {{"OXIDE_HOST", sim_.base_url()},
                 {"OXIDE_TOKEN", sim_test::SimProcess::kToken},
                 {"OXIDE_PROJECT", project_}};
}

std::unique_ptr<PluginProcess> ControllerRig::LaunchPlugin() const {
  return std::make_unique<PluginProcess>(plugin_.args, plugin_.env, plugin_.log_path());
}

long ControllerRig::Control(const std::string& method, const std::string& path,
                            const nlohmann::json& request, nlohmann::json* body) {
  sim_test::HttpClient http(sim_.base_url());
  sim_test::Reply reply = http.request(
      method, path, request.is_null() ? std::nullopt : std::optional<std::string>(request.dump()));
  if (body != nullptr) *body = nlohmann::json::parse(reply.body, nullptr, false);
  return reply.status;
}

std::vector<std::string> ControllerRig::CreateStoppedInstances(int count,
                                                               const std::string& prefix) {
  std::vector<std::string> ids;
  sim_test::HttpClient http(sim_.base_url());
  for (int i = 0; i < count; ++i) {
    nlohmann::json spec = {{"project", project_},
                           {"name", prefix + "-" + std::to_string(i)},
                           {"run_state", "stopped"}};
    sim_test::Reply reply = http.post("/__sim/instances", spec);
    if (reply.status != 201) return {};
    ids.push_back(reply.json().value("id", ""));
  }
  return ids;
}

std::vector<nlohmann::json> ControllerRig::ListDisks(std::string* error) {
  std::vector<nlohmann::json> disks;
  sim_test::HttpClient http(sim_.base_url());
  std::string query = "/v1/disks?project=" + project_ + "&limit=1000";
  for (int page = 0; page < 1000; ++page) {
    sim_test::Reply reply = http.get(query);
    if (reply.status != 200) {
      *error = "GET " + query + " answered " + std::to_string(reply.status) + ": " + reply.body;
      return disks;
    }
    nlohmann::json body = reply.json();
    const nlohmann::json& items = body["items"];
    for (const nlohmann::json& disk : items)
      disks.push_back(disk);
    if (items.empty() || !body["next_page"].is_string()) return disks;
    query = "/v1/disks?limit=1000&page_token=" + body["next_page"].get<std::string>();
  }
  *error = "more than 1000 pages of disks";
  return disks;
}

std::vector<std::vector<std::string>> SqliteQuery(const std::string& db_path,
                                                  const std::string& sql, std::string* error) {
  std::vector<std::vector<std::string>> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    *error = "cannot open " + db_path + ": " + sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    *error = sql + ": " + sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(statement)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int column = 0; column < sqlite3_column_count(statement); ++column) {
      const unsigned char* text = sqlite3_column_text(statement, column);
      row.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text) : "NULL");
    }
    rows.push_back(std::move(row));
  }
  if (step != SQLITE_DONE) *error = sql + ": " + sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

CpuUsage ProcessCpuUsage(pid_t pid) {
  std::string text = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  // After the command: state is field 3; minflt is field 10, utime and stime fields 14 and 15.
  CpuUsage usage;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index == 10) usage.minor_faults = std::stol(field);
    if (index == 14) usage.user_seconds = std::stod(field) / ticks;
    if (index == 15) usage.system_seconds = std::stod(field) / ticks;
  }
  return usage;
}

long ProcessStatusKiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

ContextSwitches ProcessContextSwitches(pid_t pid) {
  ContextSwitches total;
  std::error_code error;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream in(task.path() / "status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        total.voluntary += std::stol(line.substr(line.find(':') + 1));
      } else if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        total.involuntary += std::stol(line.substr(line.find(':') + 1));
      }
    }
  }
  return total;
}

}  // namespace oxide::testing
