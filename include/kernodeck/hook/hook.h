// kernodeck-hook: an OCI runtime hook (createRuntime, createContainer or
// prestart) for GPU nodes. It reads the container state on stdin and the
// bundle's config.json, checks the container's GPU needs against the host,
// leaves the host record at /run/kernodeck/host.json inside the container,
// logs one JSON line, and decides: in warn mode it always lets the container
// start; in enforce mode it refuses one that cannot work. Never a hang: the
// caller arms a hard time limit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kernodeck/host/host_fs.h"

namespace kernodeck::hook {

enum class Policy { Warn, Enforce };

struct Options {
  Policy policy = Policy::Warn;  // the node admin's choice; a container may only tighten it
  std::string hostRoot = "/";
  std::string logFile;                   // JSON lines; empty: no log
  std::string stage;                     // the hook stage, for the log
  std::string usageError;                // the command line could not be parsed: refuse under enforce, start under warn
  const host::HostFs* hostFs = nullptr;  // when set, the host is read through it instead of hostRoot (tests)
};

struct Outcome {
  int exitCode = 0;
  std::string message;    // one line for stderr, empty when there is nothing to say
  nlohmann::json record;  // kernodeck.host/v1
};

// The largest /etc/kernodeck/expect.json the hook reads; a bigger one is hook.expectation.invalid.
constexpr uint64_t kMaxExpectationBytes = 1u << 20;

// Does everything but arming the time limit; never throws.
Outcome run(const Options& opts, std::string_view stateJson);

}  // namespace kernodeck::hook
