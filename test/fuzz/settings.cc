// Fuzz target: the plugin's command line and environment (config/settings.h) and the instance
// metadata file's text. The input is three parts split at NUL bytes: flags (one per line), the
// environment (NAME=VALUE lines) and a metadata file's text. Flags and variables naming files are
// dropped (the target must not read whatever path the fuzzer invents); the metadata text goes to
// its parser directly. Invariants: nothing crashes or throws; a refusal names what is wrong and
// never contains the token.
#include "config/settings.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.h"
#include "node/instance_metadata.h"

namespace {

constexpr std::string_view kSecret = "fuzz-secret-5b1e0c7d";

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string_view Part(std::string_view& rest) {
  const size_t nul = rest.find('\0');
  std::string_view part = rest.substr(0, nul);
  rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view rest = input;
  const std::string_view flags = Part(rest), environment = Part(rest), metadata = Part(rest);

  std::vector<std::string> args;
  for (std::string& arg : Lines(flags)) {
    if (arg.find("file") == std::string::npos) args.push_back(std::move(arg));
  }
  oxide::Environment env{{"OXIDE_TOKEN", std::string(kSecret)}};
  for (const std::string& line : Lines(environment)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos || line.find("FILE") != std::string::npos) continue;
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  const auto parsed = oxide::ParseCommandLine(args, env);
  if (!parsed.ok()) {
    Expect(!parsed.status().message().empty());
    if (input.find(kSecret) == std::string_view::npos) {
      Expect(parsed.status().message().find(kSecret) == std::string::npos);
    }
  }

  const auto id = oxide::node::ParseInstanceMetadata(std::string(metadata), "instance.env");
  if (id.ok()) Expect(id->size() == 36);
  return 0;
}
