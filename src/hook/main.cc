// kernodeck-hook: the OCI runtime hook binary. Parses its flags, arms a hard
// time limit and calls hook::run. No LibTorch, no network.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "kernodeck/hook/hook.h"
#include "kernodeck/version.h"

namespace po = boost::program_options;
using namespace kernodeck;

static volatile sig_atomic_t gEnforce = 0;

static void onAlarm(int) {
  static const char msg[] = "kernodeck-hook: internal time limit reached\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(gEnforce ? 1 : 0);
}

// Reads stdin until EOF, at most 1 MiB, giving up at the deadline.
static std::string readStdin(std::chrono::steady_clock::time_point deadline) {
  std::string s;
  char buf[65536];
  while (s.size() < (1u << 20)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    struct pollfd p {0, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r <= 0) break;
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}

int main(int argc, char** argv) {
  hook::Options opts;
  std::string policy = "warn";
  unsigned timeoutMs = 2000;
  bool version = false, help = false;
  po::options_description desc("usage: kernodeck-hook [options] [STAGE]  (OCI state JSON on stdin)\n\noptions");
  desc.add_options()
      ("help,h", po::bool_switch(&help), "show this help")
      ("version", po::bool_switch(&version), "print the version")
      ("policy", po::value(&policy), "warn (default: log, always exit 0) or enforce (refuse containers that cannot work)")
      ("host-root", po::value(&opts.hostRoot), "read /proc, /sys, /dev under this root (default /)")
      ("log", po::value(&opts.logFile), "append one JSON line per container to FILE")
      ("timeout-ms", po::value(&timeoutMs), "hard internal time limit (default 2000)");
  po::options_description hidden;
  hidden.add_options()("stage", po::value(&opts.stage));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("stage", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    // A misconfigured hook must not stop healthy containers in warn mode.
    std::fprintf(stderr, "kernodeck-hook: %s\n", e.what());
    return policy == "enforce" ? 2 : 0;
  }
  if (help) {
    std::cout << desc;
    return 0;
  }
  if (version) {
    std::printf("kernodeck-hook %s\n", kVersion);
    return 0;
  }
  if (policy != "warn" && policy != "enforce") {
    std::fprintf(stderr, "kernodeck-hook: --policy takes warn or enforce, not '%s'\n", policy.c_str());
    return 0;
  }
  opts.policy = policy == "enforce" ? hook::Policy::Enforce : hook::Policy::Warn;
  gEnforce = opts.policy == hook::Policy::Enforce;
  signal(SIGALRM, onAlarm);
  alarm(std::max(1u, (timeoutMs + 999) / 1000));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  hook::Outcome o = hook::run(opts, readStdin(deadline));
  if (!o.message.empty()) std::fprintf(stderr, "%s\n", o.message.c_str());
  return o.exitCode;
}
