// kernodeck: a reproducibility auditor for machine-learning containers.
// This main only dispatches to a subcommand; each lives in its own file.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"

using namespace kernodeck;

static void usage(FILE* f) {
  std::fprintf(f, "usage: kernodeck COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto& c : cli::commands()) std::fprintf(f, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(f,
               "\nRun 'kernodeck COMMAND --help' (or 'kernodeck help COMMAND') for a command's options.\n\n"
               "exit codes: 0 ok; 1 findings (at or above --fail-on where the command has it, else an\n"
               "error finding); 2 usage error, or a document that is not what the command takes; 3 could\n"
               "not complete (a step failed: the report still says what was done and the first error)\n");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return report::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "help" && argc > 2) {  // "kernodeck help audit" is "kernodeck audit --help"
    name = argv[2];
    argv[2] = const_cast<char*>("--help");
  } else if (name == "-h" || name == "--help" || name == "help") {
    usage(stdout);
    return 0;
  }
  if (name == "--version") name = "version";
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    for (const auto& c : cli::commands())
      if (name == c.name) return c.run(args);
    const char* best = nullptr;
    size_t bestDist = 3;
    for (const auto& c : cli::commands()) {
      size_t d = util::editDistance(name, c.name);
      if (d < bestDist) {
        bestDist = d;
        best = c.name;
      }
    }
    std::fprintf(stderr, "kernodeck: unknown command '%s'%s%s%s\n", util::printable(name, 60).c_str(),
                 best ? ", did you mean '" : "", best ? best : "", best ? "'?" : "");
    return report::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernodeck: internal error: %s\n", util::printable(e.what()).c_str());
    return report::kExitIncomplete;
  }
}
