// Sparse backing files for simulated disks and snapshots: create, sparse-preserving copy,
// remove. Blocking file I/O, done inline on the event-loop thread (sparse copies of test
// sized data are short).
#pragma once

#include <cstdint>
#include <string>

namespace oxide_sim {

// Creates (or truncates to) a sparse file of `size` bytes.
bool create_sparse_file(const std::string& path, uint64_t size, std::string* error);

// Copies `from` to `to` keeping holes (SEEK_DATA/SEEK_HOLE + copy_file_range), then sizes
// `to` to `size` (which may be larger than the source).
bool copy_sparse_file(const std::string& from, const std::string& to, uint64_t size,
                      std::string* error);

void remove_file(const std::string& path);

}  // namespace oxide_sim
