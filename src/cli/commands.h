// The subcommand table of the `kernodeck` binary.
#pragma once

#include <string>
#include <vector>

namespace kernodeck::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& commands();

// The exit codes as the --help of a command with --fail-on states them.
extern const char* const kExitCodesHelp;
// The same for a command without --fail-on: exit 1 is an error finding.
extern const char* const kExitCodesWithoutFailOn;

// Shared output handling: writes `text` to FILE (atomically) or stdout.
int emit(const std::string& text, const std::string& outFile);

// For the commands that walk images (audit, fleet): a freed block of 1 MiB or more goes back
// to the kernel at once. glibc otherwise raises its mmap threshold (up to 32 MiB) each time
// such a block is freed, after which the layers' large buffers and vectors come from the heap
// arenas and stay resident once freed: 11 MiB of peak RSS at 200,000 files (docs/performance.md).
void returnLargeFreesToTheKernel();

int runAudit(const std::vector<std::string>& args);
int runProbe(const std::vector<std::string>& args);
// `gate`: the attached-report step of `probe --require-report` alone, run in Kernodeck's own image.
int runGate(const std::vector<std::string>& args);
int runReference(const std::vector<std::string>& args);
int runSample(const std::vector<std::string>& args);
int runDossier(const std::vector<std::string>& args);
// `diff`: audit reports compared by the report module, anything else handed to record::diffRecords.
int runDiffReports(const std::vector<std::string>& args);
int runResume(const std::vector<std::string>& args);
int runFleet(const std::vector<std::string>& args);
int runReports(const std::vector<std::string>& args);
int runHost(const std::vector<std::string>& args);
int runVersion(const std::vector<std::string>& args);
// `completion bash|zsh`: the completion script, from the commands' --help (help_text.h).
int runCompletion(const std::vector<std::string>& args);

}  // namespace kernodeck::cli
