// kernodeck-hook's command line, parsed so that no mistake in it can switch
// enforcement off.
//
// The policy is decided first, by a scan of argv that cannot fail: `--policy
// VALUE` or `--policy=VALUE`, values `warn` and `enforce`, case-sensitive. A
// policy that is given twice, has no value or has any other value ("Enforce",
// "enforced"), or a flag that looks meant as --policy ("--polcy", "--pol=enforce"),
// is treated as enforce: it is the policy itself that is broken,
// and the safe reading of a broken policy is the strict one. Then the whole line
// is parsed strictly (no abbreviations, no repeated flags, numbers checked);
// when that fails, `usageError` says why and the hook refuses the container
// under enforce, or lets it start under warn, and logs in both cases (to the
// --log file when exactly one was given).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/hook/hook.h"

namespace kernodeck::hook {

struct CommandLine {
  Options options;            // policy and logFile always set from the scan, even on a usage error
  unsigned timeoutMs = 2000;  // the hard internal time limit
  bool help = false, version = false;
  std::vector<std::string> positional;  // the stage, or a subcommand and its arguments
  std::string usageError;               // empty when the line parsed; else one line naming the problem
};

// Whether NAME is one of the hook's flags that take a value (--policy, --host-root, --log,
// --timeout-ms): the one list the parser, the policy scan and the config commands share.
bool takesValue(std::string_view name);

// Whether ARG is an OCI hook stage name (prestart, createRuntime, createContainer, startContainer,
// poststart, poststop): the only positional argument the hook takes.
bool isStage(std::string_view arg);

// One argument split as a flag: "--name=value" gives {"--name", "value", true}; anything else
// {arg, "", false}.
struct FlagParts {
  std::string name, value;
  bool inlineValue = false;
};
FlagParts splitFlag(const std::string& arg);

// `args` excludes argv[0].
CommandLine parseCommandLine(const std::vector<std::string>& args);

// The --help text.
const char* usageText();

}  // namespace kernodeck::hook
