// The registry flags shared by the commands that talk to registries without auditing
// (reports, fleet): TLS, credentials, cache, retries and timeouts.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "kernodeck/registry/client.h"

namespace kernodeck::cli {

struct RegistryFlags {
  registry::ClientOptions options;
  bool insecure = false, noCache = false;
  std::string tlsVerify = "true", authfile;
  std::string timeout;  // --timeout DURATION, as given
  int64_t defaultTimeoutS = 600;
  std::string timeoutHelp;  // --timeout's line in --help (Boost keeps a pointer to it)  // the command's overall
                            // deadline when --timeout is not given

  // Adds the flags; `transfers` also adds --retry-max-time and --stall-timeout (audit's long
  // blob transfers). `defaultTimeoutS`: the command's overall deadline (--timeout's default).
  void add(boost::program_options::options_description& opts, bool transfers = false, int64_t defaultTimeoutS = 600);
  // Checks the values and completes `options`, the deadline starting now; an error message (a
  // usage error) or "".
  std::string finish();
};

}  // namespace kernodeck::cli
