// The loop thread's copy of one table: reads are answered from memory, writes change the copy at
// once and are sent to the store thread in the batch the loop is gathering (GroupCommit). When a
// batch fails to commit, its writes are undone here, so the copy always equals what the database
// holds plus the writes still on their way. Loop thread only.
//
// Undo: for every key, each pending batch that wrote it remembers the row as it was before that
// batch's first write. Batches finish in the order they were sent. A finished batch drops its
// entries; a failed one restores the remembered row when no later batch wrote the key since, and
// otherwise hands the remembered row on to the next batch's entry (which then stands for "what
// the database had").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace oxide::store {

template <typename Key, typename Row>
class MirrorTable {
 public:
  // `unique`: a second unique column of the table (rows where it is empty are not indexed). As
  // SQL's INSERT OR REPLACE does, a write of a value another row holds removes that other row.
  explicit MirrorTable(std::string Row::*unique = nullptr) : unique_(unique) {}

  // Start-up only: fills the copy with a row read from the database.
  void Load(const Key& key, Row row) { Apply(key, std::optional<Row>(std::move(row))); }

  const Row* Find(const Key& key) const {
    auto it = rows_.find(key);
    return it == rows_.end() ? nullptr : &it->second;
  }
  // The row whose unique column is `value`.
  const Row* FindUnique(const std::string& value) const {
    auto it = value.empty() ? by_unique_.end() : by_unique_.find(value);
    return it == by_unique_.end() ? nullptr : Find(it->second);
  }
  const std::map<Key, Row>& rows() const { return rows_; }

  // Sets (or, with nullopt, removes) `key` as a write of batch `batch`.
  void Write(uint64_t batch, const Key& key, std::optional<Row> row) {
    if (unique_ != nullptr && row && !((*row).*unique_).empty()) {
      auto holder = by_unique_.find((*row).*unique_);
      if (holder != by_unique_.end() && holder->second != key) {
        Write(batch, Key(holder->second), std::nullopt);
      }
    }
    std::deque<Pending>& chain = pending_[key];
    if (chain.empty() || chain.back().batch != batch) {
      const Row* current = Find(key);
      chain.push_back({batch, current ? std::optional<Row>(*current) : std::nullopt});
      written_.emplace_back(batch, key);
    }
    Apply(key, std::move(row));
  }

  // Batch `batch` committed (`ok`) or failed; every earlier batch has been reported already.
  void BatchDone(uint64_t batch, bool ok) {
    while (!written_.empty() && written_.front().first == batch) {
      auto chain_it = pending_.find(written_.front().second);
      written_.pop_front();
      std::deque<Pending>& chain = chain_it->second;
      std::optional<Row> before = std::move(chain.front().before);
      chain.pop_front();
      if (!ok) {
        if (chain.empty()) {
          Apply(chain_it->first, std::move(before));
        } else {
          chain.front().before = std::move(before);
        }
      }
      if (chain.empty()) pending_.erase(chain_it);
    }
  }

  size_t pending_keys() const { return pending_.size(); }

 private:
  struct Pending {
    uint64_t batch;
    std::optional<Row> before;
  };

  void Apply(const Key& key, std::optional<Row> row) {
    auto it = rows_.find(key);
    if (unique_ != nullptr && it != rows_.end()) Unindex(key, it->second.*unique_);
    if (!row) {
      if (it != rows_.end()) rows_.erase(it);
      return;
    }
    if (it == rows_.end()) {
      it = rows_.emplace(key, std::move(*row)).first;
    } else {
      it->second = std::move(*row);
    }
    if (unique_ != nullptr && !(it->second.*unique_).empty()) by_unique_[it->second.*unique_] = key;
  }

  void Unindex(const Key& key, const std::string& value) {
    auto it = by_unique_.find(value);
    if (it != by_unique_.end() && it->second == key) by_unique_.erase(it);
  }

  std::string Row::*unique_;
  std::map<Key, Row> rows_;
  std::unordered_map<std::string, Key> by_unique_;
  std::map<Key, std::deque<Pending>> pending_;    // keys written by unfinished batches
  std::deque<std::pair<uint64_t, Key>> written_;  // (batch, key), first write of each pair
};

}  // namespace oxide::store
