// The one argument parser of oxide-csi-ctl: reads a verb's (or the global) arguments against its
// VerbSpec — `--flag=value` and `--flag value`, bool flags without a value, `--` ending the flags,
// whole numbers parsed strictly and range-checked, unknown flags and missing or extra positional
// arguments refused with a message a person can act on. Single-threaded CLI.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/verb_spec.h"

namespace oxide::cli {

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // flag -> values ("" for a bool)
  std::map<std::string, uint64_t> numbers;                 // whole-number flags, parsed
  // With ParseMode::kUntilPositional: the arguments from the first positional one on.
  std::vector<std::string> rest;

  bool Has(const std::string& flag) const { return values.count(flag) != 0; }
  std::string Get(const std::string& flag, const std::string& fallback = "") const;
  std::vector<std::string> All(const std::string& flag) const;
  uint64_t Number(const std::string& flag) const;
};

enum class ParseMode {
  kWholeVerb,        // every argument belongs to the verb; positionals are checked
  kUntilPositional,  // global flags: stop at the first positional, leave the rest in `rest`
};

struct ParseOutcome {
  ParsedArgs args;
  std::string error;  // empty when the arguments are fine; else the message (no "error: ")
  bool ok() const { return error.empty(); }
};

ParseOutcome ParseArgs(const VerbSpec& spec, const std::vector<std::string>& args,
                       ParseMode mode = ParseMode::kWholeVerb);

// Checks one whole number for `flag` (digits only, no sign, within the flag's range). Empty
// when good, else the message, e.g. `--size-gib: "abc" is not a whole number of GiB`.
std::string CheckWholeNumber(const FlagSpec& flag, const std::string& text, uint64_t* value);

// The declared flag nearest to `name` by edit distance, when it is close enough to be a typo.
std::string NearestFlag(const VerbSpec& spec, const std::string& name);

}  // namespace oxide::cli
