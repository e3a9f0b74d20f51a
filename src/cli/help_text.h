// The --help of kernodeck's commands read back as data: the options (and the actions of a
// command that has them), for `kernodeck completion` (cmd_completion.cc). The text is what the
// command itself prints for --help, captured in this process, so the completion offers exactly
// the options --help lists (scripts/gen-man makes the man pages from the same text).
#pragma once

#include <string>
#include <vector>

namespace kernodeck::cli {

struct HelpOption {
  std::string longName;   // "--format"
  std::string shortName;  // "-o", or empty
  bool takesValue = false;
  std::string valueName;    // "arg", "FILE", "cpu|cuda|rocm|auto"
  std::string description;  // its lines joined by spaces
};

struct HelpText {
  std::vector<HelpOption> options;
  std::vector<std::string> actions;  // "init", "show", ... when the usage line offers a choice
};

// What `kernodeck ARGS... --help` prints on stdout, run in this process (stdout redirected to an
// anonymous file for the call); empty when the command failed.
std::string captureHelp(const std::vector<std::string>& args);

// Reads the option lines ("  -o [ --output ] arg   ...", "  --json   ...") and, when the usage
// line offers actions ("init|show|verify", "SUBCOMMAND"), the action lines ("  init    ...").
HelpText parseHelp(const std::string& text);

}  // namespace kernodeck::cli
