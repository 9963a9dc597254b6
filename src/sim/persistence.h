// SQLite persistence of the simulator state: one row per object (kind, id, JSON record)
// plus key/value settings. Each model mutation is written before the response is sent,
// grouped in a transaction. Event-loop thread only.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace oxide_sim {

class Persistence {
 public:
  Persistence() = default;
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Opens (creating if needed) the database. Returns false and sets *error on failure.
  bool open(const std::string& path, std::string* error);
  bool is_open() const { return db_ != nullptr; }

  void put(const std::string& kind, const std::string& id, const std::string& json);
  void erase(const std::string& kind, const std::string& id);
  void put_setting(const std::string& key, const std::string& value);

  // kind -> [(id, json)]
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> load_objects();
  std::map<std::string, std::string> load_settings();

  // Nestable: only the outermost pair issues BEGIN/COMMIT.
  void begin();
  void commit();

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  int depth_ = 0;
};

// Groups the writes of one logical change into one transaction.
class WriteBatch {
 public:
  explicit WriteBatch(Persistence& store) : store_(store) { store_.begin(); }
  ~WriteBatch() { store_.commit(); }
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;

 private:
  Persistence& store_;
};

}  // namespace oxide_sim
