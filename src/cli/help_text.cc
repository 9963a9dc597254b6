#include "cli/help_text.h"

#include <sstream>

namespace oxide::cli {
namespace {

constexpr size_t kFlagColumn = 28;
// Joins the words of "[--size-gib N]" so Wrap keeps them on one line; Wrap prints it as a space.
constexpr char kNonBreakingSpace = '\x01';

std::string FlagUsage(const FlagSpec& flag) {
  std::string usage = "--" + flag.name;
  if (flag.kind != FlagKind::kBool) usage += " " + flag.value_name;
  return usage;
}

std::string FlagDescription(const FlagSpec& flag) {
  std::string text = flag.help;
  if (flag.kind == FlagKind::kWholeNumber) {
    text += " From " + std::to_string(flag.min) + " to " + std::to_string(flag.max) +
            (flag.unit.empty() ? "" : " " + flag.unit) + ".";
  }
  if (!flag.choices.empty()) {
    std::string choices;
    for (const std::string& choice : flag.choices)
      choices += (choices.empty() ? "" : ", ") + choice;
    text += " One of: " + choices + ".";
  }
  if (flag.required) text += " Required.";
  for (const std::string& other : flag.conflicts_with)
    text += " Not with --" + other + ".";
  if (flag.repeated) text += " May be repeated.";
  return text;
}

void PrintFlags(std::ostream& out, const std::vector<FlagSpec>& flags, size_t indent) {
  for (const FlagSpec& flag : flags) {
    std::string left = std::string(indent, ' ') + FlagUsage(flag);
    if (left.size() + 2 > kFlagColumn) {
      out << left << "\n" << std::string(kFlagColumn, ' ');
    } else {
      out << left << std::string(kFlagColumn - left.size(), ' ');
    }
    out << Wrap(FlagDescription(flag), kFlagColumn, kFlagColumn) << "\n";
  }
}

void PrintVerbEntry(std::ostream& out, const VerbSpec& spec) {
  out << "  " << Wrap(Synopsis(spec), 2, 6) << "\n";
  out << "      " << Wrap(spec.help, 6, 6) << "\n";
}

}  // namespace

std::string Wrap(const std::string& text, size_t first_indent, size_t indent, size_t width) {
  std::istringstream words(text);
  std::string word;
  std::string out;
  size_t column = first_indent;
  bool line_empty = true;
  while (words >> word) {
    if (!line_empty && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  for (char& c : out) {
    if (c == kNonBreakingSpace) c = ' ';
  }
  return out;
}

std::string Synopsis(const VerbSpec& spec) {
  std::string text = spec.group.empty() ? "oxide-csi-ctl" : spec.group + " " + spec.verb;
  for (const PositionalSpec& positional : spec.positionals) {
    text += positional.optional ? " [<" + positional.name + ">]" : " <" + positional.name + ">";
  }
  for (const FlagSpec& flag : spec.flags) {
    // A word per flag: "[--size-gib N]" stays together when the line wraps.
    std::string usage = FlagUsage(flag);
    for (char& c : usage) {
      if (c == ' ') c = kNonBreakingSpace;
    }
    text += flag.required ? " " + usage : " [" + usage + "]" + (flag.repeated ? "..." : "");
  }
  return text;
}

void PrintMainHelp(std::ostream& out, const VerbSpec& global, const std::vector<VerbSpec>& verbs) {
  out << "Usage: oxide-csi-ctl [global flags] <group> <verb> [arguments] [flags]\n"
         "       oxide-csi-ctl [<group> [<verb>]] --help\n\n"
      << Wrap(global.help, 0, 0)
      << "\n\nGlobal flags (before <group>, or among the verb's flags):\n";
  PrintFlags(out, global.flags, 2);
  out << "\n"
      << Wrap(
             "Exit codes: 0 ok; 1 the call failed or the plugin could not be reached; 2 bad "
             "usage (nothing was sent).",
             0, 0)
      << "\n\nVerbs (`oxide-csi-ctl <group> --help` describes every flag):\n";
  std::string group;
  for (const VerbSpec& spec : verbs) {
    if (spec.group != group && !group.empty()) out << "\n";
    group = spec.group;
    PrintVerbEntry(out, spec);
  }
}

void PrintVerbsHelp(std::ostream& out, const std::vector<VerbSpec>& verbs) {
  bool first = true;
  for (const VerbSpec& spec : verbs) {
    if (!first) out << "\n";
    first = false;
    PrintVerbEntry(out, spec);
    PrintFlags(out, spec.flags, 6);
  }
}

}  // namespace oxide::cli
