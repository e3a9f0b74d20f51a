// Option parsing shared by every subcommand of the kernodeck binary: one parser over
// Boost.Program_options, one usage-error line ("kernodeck COMMAND: message", exit 2) and one
// --help layout (the options, then the exit codes).
#pragma once

#include <boost/program_options.hpp>
#include <initializer_list>
#include <string>
#include <vector>

namespace kernodeck::cli {

// Parses ARGS into `opts`, the positional arguments (when `positionals` is given) into it;
// -1 to go on, or the usage exit code after one line on stderr naming "kernodeck COMMAND".
// Without `positionals` a positional argument is a usage error.
int parseOptions(const std::string& command, const std::vector<std::string>& args,
                 boost::program_options::options_description& opts, std::vector<std::string>* positionals = nullptr);

// The same with named positional arguments, each taking at most one, in order ("OUTDIR",
// "A B"): a missing one stays as it was, one too many is a usage error.
int parseOptions(const std::string& command, const std::vector<std::string>& args,
                 boost::program_options::options_description& opts, std::initializer_list<std::string*> positionals);

// Prints OPTS and the exit codes (`exitCodes`, default: the shared kExitCodesHelp) to stdout;
// returns 0, the exit code of --help.
int printHelp(const boost::program_options::options_description& opts, const char* exitCodes = nullptr);

// Prints "kernodeck COMMAND: MESSAGE" (made printable) on stderr; returns the usage exit code.
int usageError(const std::string& command, const std::string& message);

}  // namespace kernodeck::cli
