#include "options.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace oxide_sim {
namespace {

uint64_t to_number(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const unsigned long long value = std::stoull(text, &used);
    if (used != text.size() || text.front() == '-') throw std::invalid_argument(text);
    return value;
  } catch (const std::exception&) {
    throw std::invalid_argument(flag + " needs a non-negative integer, got \"" + text + "\"");
  }
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read --token-file " + path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  return token;
}

// Reads the flag argv[*i] (its value from the next argument, which *i then moves to) into
// `options`. Throws std::invalid_argument naming the problem.
void read_flag(int argc, char** argv, int* i, SimOptions* options) {
  const std::string flag = argv[*i];
  auto value = [&]() -> std::string {
    if (*i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    return argv[++*i];
  };
  if (flag == "--port") {
    const uint64_t port = to_number(flag, value());
    if (port > 65535) throw std::invalid_argument("--port must be at most 65535");
    options->port = static_cast<uint16_t>(port);
  } else if (flag == "--token") {
    options->token = value();
  } else if (flag == "--token-file") {
    options->token = read_token_file(value());
  } else if (flag == "--tls-cert") {
    options->tls_cert_file = value();
  } else if (flag == "--tls-key") {
    options->tls_key_file = value();
  } else if (flag == "--state-db") {
    options->state_db = value();
  } else if (flag == "--seed-file") {
    options->seed_file = value();
  } else if (flag == "--project") {
    options->projects.push_back(value());
  } else if (flag == "--storage-quota") {
    options->storage_quota = to_number(flag, value());
  } else if (flag == "--hotplug") {
    options->hotplug = true;
  } else if (flag == "--create-delay-ms") {
    options->create_delay_ms = to_number(flag, value());
  } else if (flag == "--delete-delay-ms") {
    options->delete_delay_ms = to_number(flag, value());
  } else if (flag == "--instance-delay-ms") {
    options->instance_delay_ms = to_number(flag, value());
  } else if (flag == "--async") {
    options->async_mode = true;
  } else if (flag == "--manual-clock") {
    options->manual_clock = true;
  } else if (flag == "--fault-seed") {
    options->fault_seed = to_number(flag, value());
  } else if (flag == "--fault") {
    options->fault_rules.push_back(Faults::rule_from_flag(value()));
  } else if (flag == "--idle-timeout-s") {
    const uint64_t seconds = to_number(flag, value());
    if (seconds < 1 || seconds > 86400)
      throw std::invalid_argument("--idle-timeout-s must be between 1 and 86400");
    options->idle_timeout_s = static_cast<unsigned>(seconds);
  } else if (flag == "--reject-unknown-fields") {
    options->reject_unknown_fields = true;
  } else if (flag == "--guest-backing-dir") {
    options->guest_backing_dir = value();
  } else if (flag == "--guest-sysfs-root") {
    options->guest_sysfs_root = value();
  } else {
    throw std::invalid_argument("unknown option " + flag + " (see --help)");
  }
}

// The flags that must or must not go together, and the token's form.
void check_options(const SimOptions& options) {
  if (options.token.rfind("oxide-token-", 0) != 0) {
    throw std::invalid_argument(
        "the token must start with \"oxide-token-\": the Oxide API ignores other tokens, so no "
        "request could ever authenticate");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    throw std::invalid_argument("--tls-cert and --tls-key go together");
  }
  if (!options.guest_sysfs_root.empty() && options.guest_backing_dir.empty()) {
    throw std::invalid_argument("--guest-sysfs-root needs --guest-backing-dir");
  }
}

}  // namespace

std::string help_text() {
  return R"(oxide-sim: a local simulator of the Oxide API (version 2026081901.0.0)

Usage: oxide-sim [options]
The chosen port is printed alone on the first stdout line. Listens on 127.0.0.1 only.

  --port N                 TCP port (0 = pick a free one; default 0)
  --token T                accepted bearer token; must start with "oxide-token-"
                           (default oxide-token-sim)
  --token-file F           read the token from the first line of F
  --tls-cert F --tls-key F serve HTTPS with this PEM certificate and key
  --state-db F             keep all state in this SQLite file (default: in memory)
  --seed-file F            JSON with "projects", "instances", "quota" to create at start
  --project NAME           create this project at start if absent (repeatable; when neither
                           --project nor --seed-file is given, "demo" is created)
  --storage-quota BYTES    silo storage quota (capacity.storage; default 10 TiB)
  --hotplug                allow attach/detach while the instance runs (real API: no)
  --create-delay-ms N      disk/snapshot create sagas take N ms (resource visible as creating)
  --delete-delay-ms N      disk/snapshot delete sagas take N ms before the 204
  --instance-delay-ms N    instance creating/starting/stopping last N ms
  --async                  answer creates at once (state creating); finish after the delay
  --manual-clock           saga delays count only time advanced by POST /__sim/clock/advance
  --fault-seed N           seed of the fault-injection random sequence (default 1)
  --fault RULE             add a fault rule "SELECTOR:key=value,..." where SELECTOR is an
                           operationId (disk_create, ...), "*", "/path/prefix" or
                           "METHOD /path/prefix"; keys: 500, 503, 429 (rates 0..1), drop (rate),
                           retry_after_s, latency_ms, jitter_ms. Repeatable.
  --idle-timeout-s N       close keep-alive connections idle for N seconds (default 300)
  --reject-unknown-fields  400 on unknown JSON body fields (the real API ignores them)
  --guest-backing-dir DIR  enable guest device emulation (needs root): sparse backing files
                           <DIR>/<disk-id>.img and loop devices for guest-visible disks
  --guest-sysfs-root DIR   where the sysfs-like tree is written (default <backing-dir>/sysfs)
  --help                   show this text
)";
}

ParseOutcome parse_options(int argc, char** argv, SimOptions* options) {
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::fputs(help_text().c_str(), stdout);
        return ParseOutcome::kExitOk;
      }
      read_flag(argc, argv, &i, options);
    }
    check_options(*options);
  } catch (const std::invalid_argument& problem) {
    std::fprintf(stderr, "oxide-sim: %s\n", problem.what());
    return ParseOutcome::kExitError;
  }
  return ParseOutcome::kRun;
}

}  // namespace oxide_sim
