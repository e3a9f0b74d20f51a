// The registry flags shared by the commands that talk to registries without auditing
// (reports, fleet): TLS, credentials, cache, retries and timeouts.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "kernodeck/registry/client.h"

namespace kernodeck::cli {

struct RegistryFlags {
  registry::ClientOptions options;
  bool insecure = false, noCache = false;
  std::string tlsVerify = "true", authfile;

  // Adds the flags; `transfers` also adds --retry-max-time and --stall-timeout (audit's long
  // blob transfers).
  void add(boost::program_options::options_description& opts, bool transfers = false);
  // Checks the values and completes `options`; an error message (a usage error) or "".
  std::string finish();
};

}  // namespace kernodeck::cli
