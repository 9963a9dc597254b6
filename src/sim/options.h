// Command-line options of oxide-sim and their parsing. Called once from main.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "faults.h"

namespace oxide_sim {

struct SimOptions {
  uint16_t port = 0;
  std::string token = "oxide-token-sim";
  std::string tls_cert_file, tls_key_file;
  std::string state_db;
  std::string seed_file;
  std::vector<std::string> projects;  // --project (repeatable)
  std::optional<uint64_t> storage_quota;
  bool hotplug = false;
  uint64_t create_delay_ms = 0, delete_delay_ms = 0, instance_delay_ms = 0;
  bool async_mode = false;
  bool manual_clock = false;  // saga delays advance only via POST /__sim/clock/advance
  uint64_t fault_seed = 1;
  std::vector<FaultRule> fault_rules;
  std::string guest_sysfs_root, guest_backing_dir;
  bool reject_unknown_fields = false;
  unsigned idle_timeout_s = 300;
};

enum class ParseOutcome { kRun, kExitOk, kExitError };

// Parses argv. Prints --help to stdout, errors to stderr.
ParseOutcome parse_options(int argc, char** argv, SimOptions* options);

std::string help_text();

}  // namespace oxide_sim
