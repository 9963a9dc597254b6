#include "cli/arg_parser.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace oxide::cli {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string FlagList(const VerbSpec& spec) {
  if (spec.flags.empty()) return "it takes no flags";
  std::string list;
  for (const FlagSpec& flag : spec.flags) {
    list += (list.empty() ? "" : ", ") + std::string("--") + flag.name;
  }
  return "its flags: " + list;
}

std::string PositionalList(const VerbSpec& spec) {
  if (spec.positionals.empty()) return "it takes no arguments";
  std::string list;
  for (const PositionalSpec& positional : spec.positionals) {
    list += (list.empty() ? "" : " ") +
            (positional.optional ? "[<" + positional.name + ">]" : "<" + positional.name + ">");
  }
  return "it takes " + list;
}

std::string UnknownFlag(const VerbSpec& spec, const std::string& name) {
  std::string message = "unknown flag --" + name + " for " + spec.Title();
  std::string nearest = NearestFlag(spec, name);
  if (!nearest.empty()) message += " (did you mean --" + nearest + "?)";
  return message + "; " + FlagList(spec);
}

// Stores one flag's value; returns the error message, or "" when fine.
std::string Accept(const FlagSpec& flag, const std::string& value, ParsedArgs* parsed) {
  if (parsed->Has(flag.name) && !flag.repeated) return "--" + flag.name + " is given twice";
  switch (flag.kind) {
    case FlagKind::kWholeNumber: {
      uint64_t number = 0;
      std::string error = CheckWholeNumber(flag, value, &number);
      if (!error.empty()) return error;
      parsed->numbers[flag.name] = number;
      break;
    }
    case FlagKind::kKeyValue:
      if (value.find('=') == std::string::npos || value.front() == '=') {
        return "--" + flag.name + ": \"" + value + "\" is not KEY=VALUE";
      }
      break;
    case FlagKind::kString:
      if (!flag.choices.empty() &&
          std::find(flag.choices.begin(), flag.choices.end(), value) == flag.choices.end()) {
        std::string choices;
        for (const std::string& choice : flag.choices)
          choices += (choices.empty() ? "" : " or ") + choice;
        return "--" + flag.name + ": \"" + value + "\" is not one of " + choices;
      }
      break;
    case FlagKind::kBool:
      break;
  }
  parsed->values[flag.name].push_back(value);
  return "";
}

// "--name=value" or "--name": the name, and the value when one is attached.
struct FlagWord {
  std::string name;
  std::optional<std::string> attached;
};
FlagWord SplitFlagWord(const std::string& arg) {
  const std::string word = arg.substr(2);
  const size_t eq = word.find('=');
  if (eq == std::string::npos) return {word, std::nullopt};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

// Reads the flag `args[*i]` (with its value: after '=' or the next argument, which *i then
// moves to) into `parsed`; returns the error message, or "" when fine.
std::string ReadFlag(const VerbSpec& spec, const std::vector<std::string>& args, size_t* i,
                     ParsedArgs* parsed) {
  const std::string& arg = args[*i];
  if (arg.rfind("--", 0) != 0) {
    return "unknown flag " + arg + " for " + spec.Title() + " (flags are spelled --name); " +
           FlagList(spec);
  }
  const auto [name, attached] = SplitFlagWord(arg);
  const FlagSpec* flag = spec.FindFlag(name);
  if (flag == nullptr) return UnknownFlag(spec, name);
  if (flag->kind == FlagKind::kBool) {
    if (attached) return "--" + name + " takes no value (give --" + name + " alone)";
    return Accept(*flag, "", parsed);
  }
  if (attached) return Accept(*flag, *attached, parsed);
  if (*i + 1 >= args.size() || (args[*i + 1].rfind("--", 0) == 0 && args[*i + 1].size() > 2)) {
    return "--" + name + " needs a value (--" + name + " " +
           (flag->value_name.empty() ? "VALUE" : flag->value_name) + ")";
  }
  return Accept(*flag, args[++*i], parsed);
}

// Reads every argument into `parsed`: flags, positionals (or, with kUntilPositional, the rest
// from the first positional on). Returns the first error message, or "".
std::string ReadArguments(const VerbSpec& spec, const std::vector<std::string>& args,
                          ParseMode mode, ParsedArgs* parsed) {
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool looks_like_flag = !flags_ended && arg.size() > 1 && arg[0] == '-';
    if (!looks_like_flag) {
      if (mode == ParseMode::kUntilPositional) {
        parsed->rest.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
        break;
      }
      parsed->positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    std::string error = ReadFlag(spec, args, &i, parsed);
    if (!error.empty()) return error;
  }
  return "";
}

// The positional arguments' count against the verb's: none missing, none extra.
std::string CheckPositionals(const VerbSpec& spec, const ParsedArgs& parsed) {
  size_t required = 0;
  for (const PositionalSpec& positional : spec.positionals) {
    if (!positional.optional) ++required;
  }
  if (parsed.positional.size() < required) {
    return spec.Title() + ": missing <" + spec.positionals[parsed.positional.size()].name + "> (" +
           PositionalList(spec) + ")";
  }
  if (parsed.positional.size() > spec.positionals.size()) {
    return spec.Title() + ": unexpected argument \"" + parsed.positional[spec.positionals.size()] +
           "\" (" + PositionalList(spec) + ")";
  }
  return "";
}

// The flags given together: no two that conflict, every required one.
std::string CheckFlagSet(const VerbSpec& spec, const ParsedArgs& parsed) {
  for (const FlagSpec& flag : spec.flags) {
    for (const std::string& other : flag.conflicts_with) {
      if (parsed.Has(flag.name) && parsed.Has(other)) {
        return spec.Title() + ": --" + flag.name + " and --" + other + " cannot be given together";
      }
    }
  }
  for (const FlagSpec& flag : spec.flags) {
    if (flag.required && !parsed.Has(flag.name)) {
      return spec.Title() + ": --" + flag.name + " is required (--" + flag.name + " " +
             flag.value_name + ")";
    }
  }
  return "";
}

}  // namespace

std::string ParsedArgs::Get(const std::string& flag, const std::string& fallback) const {
  auto found = values.find(flag);
  return found == values.end() || found->second.empty() ? fallback : found->second.back();
}

std::vector<std::string> ParsedArgs::All(const std::string& flag) const {
  auto found = values.find(flag);
  return found == values.end() ? std::vector<std::string>{} : found->second;
}

uint64_t ParsedArgs::Number(const std::string& flag) const {
  auto found = numbers.find(flag);
  return found == numbers.end() ? 0 : found->second;
}

std::string CheckWholeNumber(const FlagSpec& flag, const std::string& text, uint64_t* value) {
  const std::string unit = flag.unit.empty() ? "" : " " + flag.unit;
  const std::string prefix = "--" + flag.name + ": ";
  const bool digits_only =
      !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only) return prefix + "\"" + text + "\" is not a whole number of" + unit;
  uint64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc::result_out_of_range || (error == std::errc() && number > flag.max)) {
    return prefix + text + " is too large (at most " + std::to_string(flag.max) + unit + ")";
  }
  if (error != std::errc() || end != text.data() + text.size()) {
    return prefix + "\"" + text + "\" is not a whole number of" + unit;
  }
  if (number < flag.min) {
    return prefix + text + " is too small (must be at least " + std::to_string(flag.min) + ")";
  }
  *value = number;
  return "";
}

std::string NearestFlag(const VerbSpec& spec, const std::string& name) {
  std::string best;
  size_t best_distance = 0;
  for (const FlagSpec& flag : spec.flags) {
    size_t distance = EditDistance(name, flag.name);
    if (best.empty() || distance < best_distance) {
      best = flag.name;
      best_distance = distance;
    }
  }
  // A typo: a few edits, and fewer than half the name changed.
  if (best.empty() || best_distance > 3 || best_distance * 2 >= std::max<size_t>(name.size(), 2)) {
    return "";
  }
  return best;
}

ParseOutcome ParseArgs(const VerbSpec& spec, const std::vector<std::string>& args, ParseMode mode) {
  ParseOutcome outcome;
  outcome.error = ReadArguments(spec, args, mode, &outcome.args);
  if (outcome.ok() && mode == ParseMode::kWholeVerb) {
    outcome.error = CheckPositionals(spec, outcome.args);
  }
  if (outcome.ok()) outcome.error = CheckFlagSet(spec, outcome.args);
  return outcome;
}

}  // namespace oxide::cli
