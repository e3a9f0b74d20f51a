// Starting a program: the one place in Kernodeck that does it.
//
// Every program Kernodeck starts (git, the project's Python, credential helpers, the
// fresh process of a resume check, the steps of a dossier replay) goes through
// runProcess: an argv vector handed to posix_spawnp, never a shell, so no string from a
// document or a flag is ever interpreted as shell syntax. The child runs in its own
// process group, which is killed when the deadline passes; its output is captured up to
// a bound; how it ended (exit status or signal, timed out) comes back as a value.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::util {

// Where a child's stdout or stderr goes.
enum class ProcessOutput {
  Capture,  // into ProcessResult::out / err, up to ProcessSpec::maxOutput bytes
  Discard,  // /dev/null
  Stderr,   // the parent's stderr (progress a user should see; stdout stays machine output)
};

struct ProcessSpec {
  // argv[0] is the program: looked up in PATH when it holds no '/'. Must not be empty.
  std::vector<std::string> argv;
  // Working directory of the child; empty: the parent's.
  std::string cwd;
  // Variables added to (or replacing those of) the parent's environment.
  std::map<std::string, std::string> env;
  // Variables removed from the child's environment.
  std::vector<std::string> unsetEnv;
  // Written to the child's stdin, which is then closed; the child reads /dev/null when empty.
  std::string stdinData;
  // Wall-clock limit in milliseconds; 0: none. On expiry the whole process group is killed.
  unsigned timeoutMs = 0;
  // Bytes kept per captured stream; the rest is read and dropped (truncated is set).
  size_t maxOutput = 1u << 20;
  ProcessOutput out = ProcessOutput::Capture;
  ProcessOutput err = ProcessOutput::Capture;
};

struct ProcessResult {
  bool exited = false;  // ended by exit(); exitCode is meaningful
  int exitCode = -1;
  int signal = 0;          // the signal that ended it, when it did not exit
  bool timedOut = false;   // killed because the deadline passed
  bool truncated = false;  // a captured stream was longer than maxOutput
  double seconds = 0;      // wall-clock time from start to end
  std::string out, err;

  // Exited with status 0 before the deadline.
  bool ok() const { return exited && exitCode == 0 && !timedOut; }
  // "exited with status 3", "was killed by signal 9 (Killed)", "timed out after 5 s".
  std::string describe() const;
  // The last line of captured stderr (or stdout), printable, for one-line error messages.
  std::string lastLine() const;
};

// Starts spec.argv and waits for it. An error only when it could not be started (program
// not found or not executable, working directory missing, no pipes); every way it can end
// once started is a ProcessResult.
Result<ProcessResult> runProcess(const ProcessSpec& spec);

// Replaces this process with `argv` (looked up on PATH; argv vector, never a shell), for a
// wrapper that has set up its own state first (the replay's network namespace). Returns only
// when the program cannot be started, with the reason.
Error replaceProcess(const std::vector<std::string>& argv);

// argv as a user could paste it into a POSIX shell (single-quoted where needed), for
// printing the commands a replay runs. Display only: never executed through a shell.
std::string quoteCommand(const std::vector<std::string>& argv);

// Removes a file or a directory tree without following links (std::filesystem), refusing
// "/" and empty paths. Missing paths are not an error.
Status removeTree(const std::string& path);

}  // namespace kernodeck::util
