#include "persistence.h"

#include <sqlite3.h>

#include <cstdio>

namespace oxide_sim {
namespace {

struct Statement {
  sqlite3_stmt* handle = nullptr;
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &handle, nullptr); }
  ~Statement() { sqlite3_finalize(handle); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int index, const std::string& text) {
    sqlite3_bind_text(handle, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  std::string column(int index) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(handle, index));
    return text == nullptr ? std::string() : std::string(text);
  }
};

}  // namespace

Persistence::~Persistence() {
  if (db_ != nullptr) sqlite3_close(db_);
}

bool Persistence::open(const std::string& path, std::string* error) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    *error = "cannot open state database " + path + ": " + sqlite3_errmsg(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  }
  const char* schema =
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=NORMAL;"
      "CREATE TABLE IF NOT EXISTS objects (kind TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT "
      "NULL, PRIMARY KEY (kind, id));"
      "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);";
  char* message = nullptr;
  if (sqlite3_exec(db_, schema, nullptr, nullptr, &message) != SQLITE_OK) {
    *error = "cannot initialise state database " + path + ": " + (message ? message : "?");
    sqlite3_free(message);
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  }
  return true;
}

void Persistence::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::fprintf(stderr, "oxide-sim: state database error: %s\n", message ? message : "?");
    sqlite3_free(message);
  }
}

void Persistence::put(const std::string& kind, const std::string& id, const std::string& json) {
  if (db_ == nullptr) return;
  Statement statement(db_, "INSERT OR REPLACE INTO objects (kind, id, body) VALUES (?1, ?2, ?3)");
  statement.bind(1, kind);
  statement.bind(2, id);
  statement.bind(3, json);
  if (sqlite3_step(statement.handle) != SQLITE_DONE) {
    std::fprintf(stderr, "oxide-sim: state database write failed: %s\n", sqlite3_errmsg(db_));
  }
}

void Persistence::erase(const std::string& kind, const std::string& id) {
  if (db_ == nullptr) return;
  Statement statement(db_, "DELETE FROM objects WHERE kind = ?1 AND id = ?2");
  statement.bind(1, kind);
  statement.bind(2, id);
  sqlite3_step(statement.handle);
}

void Persistence::put_setting(const std::string& key, const std::string& value) {
  if (db_ == nullptr) return;
  Statement statement(db_, "INSERT OR REPLACE INTO settings (key, value) VALUES (?1, ?2)");
  statement.bind(1, key);
  statement.bind(2, value);
  sqlite3_step(statement.handle);
}

std::map<std::string, std::vector<std::pair<std::string, std::string>>>
Persistence::load_objects() {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  if (db_ == nullptr) return out;
  Statement statement(db_, "SELECT kind, id, body FROM objects ORDER BY kind, id");
  while (sqlite3_step(statement.handle) == SQLITE_ROW) {
    out[statement.column(0)].emplace_back(statement.column(1), statement.column(2));
  }
  return out;
}

std::map<std::string, std::string> Persistence::load_settings() {
  std::map<std::string, std::string> out;
  if (db_ == nullptr) return out;
  Statement statement(db_, "SELECT key, value FROM settings");
  while (sqlite3_step(statement.handle) == SQLITE_ROW) {
    out[statement.column(0)] = statement.column(1);
  }
  return out;
}

void Persistence::begin() {
  if (db_ == nullptr) return;
  if (depth_++ == 0) exec("BEGIN IMMEDIATE");
}

void Persistence::commit() {
  if (db_ == nullptr) return;
  if (--depth_ == 0) exec("COMMIT");
}

}  // namespace oxide_sim
