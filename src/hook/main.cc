// kernodeck-hook: the OCI runtime hook binary. Decides the policy first (see
// command_line.h), arms a hard time limit, reads the state and calls hook::run;
// `kernodeck-hook cdi ...` writes and installs CDI specs (cdi.h). No LibTorch, no network.
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/hook/command_line.h"
#include "kernodeck/hook/hook.h"
#include "kernodeck/hook/hook_config.h"
#include "kernodeck/oci/runtime_spec.h"
#include "kernodeck/version.h"

using namespace kernodeck;

static volatile sig_atomic_t gEnforce = 1;  // until the policy is known, the strict reading

static void onAlarm(int) {
  static const char msg[] = "kernodeck-hook: internal time limit reached\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(gEnforce ? 1 : 0);
}

// Reads stdin until EOF, at most 1 MiB, giving up at the deadline.
static std::string readStdin(std::chrono::steady_clock::time_point deadline) {
  std::string s;
  char buf[16384];  // a state is a few KiB; a smaller buffer touches fewer pages
  while (s.size() < (1u << 20)) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    struct pollfd p {
      0, POLLIN, 0
    };
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r <= 0) break;
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}

// Whether stdin could carry a runtime's state: a pipe, a socket or a file (as runtimes hand it
// over), not a terminal or /dev/null (a person asking for --version).
static bool stdinMayHoldState() {
  struct stat s {};
  if (::fstat(0, &s) != 0) return false;
  return S_ISFIFO(s.st_mode) || S_ISSOCK(s.st_mode) || S_ISREG(s.st_mode);
}

int main(int argc, char** argv) {
  std::string first = argc > 1 ? argv[1] : "";
  bool configCommand =
      first == "cdi" || first == "runc-config" || first == "hooks-d" || first == "install" || first == "uninstall";
  hook::CommandLine cl = hook::parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  gEnforce = cl.options.policy == hook::Policy::Enforce;
  signal(SIGALRM, onAlarm);
  alarm(std::max(1u, (cl.timeoutMs + 999) / 1000));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(cl.timeoutMs);
  std::optional<std::string> state;
  if (configCommand) {
    // A person's command, unless a runtime runs it as a hook: a hook line that begins with a
    // subcommand ([kernodeck-hook, hooks-d, --policy, enforce]) gets a runtime state on stdin and
    // would check nothing, a mistake like `--version` on the line (issue 25 §5).
    if (!stdinMayHoldState() || !oci::parseRuntimeState(*(state = readStdin(deadline))).ok()) {
      alarm(0);
      return hook::configCommand(std::vector<std::string>(argv + 1, argv + argc));
    }
    cl.usageError = "'" + first +
                    "' is a subcommand, not a runtime-hook argument, and stdin holds a runtime state: this hook "
                    "line checks nothing";
  }
  if (cl.usageError.empty() && (cl.help || cl.version)) {
    // Alone on the line (parseCommandLine refuses them with anything else). A runtime that runs
    // `kernodeck-hook --version` as a hook hands it a state on stdin: that is a hook line that
    // checks nothing, a mistake like any other (issue 25 §5), not a question to answer.
    if (!stdinMayHoldState() || !oci::parseRuntimeState(*(state = readStdin(deadline))).ok()) {
      alarm(0);
      if (cl.help)
        std::fputs(hook::usageText(), stdout);
      else
        std::printf("kernodeck-hook %s\n", kVersion);
      return 0;
    }
    cl.usageError = std::string("'") + (cl.version ? "--version" : "--help") +
                    "' is not a runtime-hook argument, and stdin holds a runtime state: this hook line checks nothing";
  }
  cl.options.usageError = cl.usageError;
  hook::Outcome o = hook::run(cl.options, state ? *state : readStdin(deadline));
  if (!o.message.empty()) std::fprintf(stderr, "%s\n", o.message.c_str());
  return o.exitCode;
}
