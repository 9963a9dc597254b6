// oxide-csi-ctl's help, generated from the same VerbSpec declarations the parser reads: the list
// of verbs (one per entry: arguments and flags, then the description), a group's verbs with every
// flag described, and one verb's. Wrapped at 80 columns. Single-threaded CLI.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/verb_spec.h"

namespace oxide::cli {

inline constexpr size_t kHelpWidth = 80;

// Words of `text` wrapped to `width` columns: the first line starts after `first_indent`
// columns already used, every further line is indented by `indent` spaces.
std::string Wrap(const std::string& text, size_t first_indent, size_t indent,
                 size_t width = kHelpWidth);

// "controller create <name> [--size-gib N] ..."; the words of one flag are joined by a character
// Wrap keeps together and prints as a space (so pass it through Wrap before printing).
std::string Synopsis(const VerbSpec& spec);

// The whole help: usage, global flags, exit codes, then every verb (arguments, flags, description).
void PrintMainHelp(std::ostream& out, const VerbSpec& global, const std::vector<VerbSpec>& verbs);
// The verbs of one group (or one verb) with each flag described.
void PrintVerbsHelp(std::ostream& out, const std::vector<VerbSpec>& verbs);

}  // namespace oxide::cli
