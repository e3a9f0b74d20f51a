// The registry flags shared by the commands that talk to registries without auditing
// (reports, fleet): TLS, credentials, cache, retries and timeouts.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "kernodeck/registry/client.h"

namespace kernodeck::cli {

struct RegistryFlags {
  registry::ClientOptions options;
  bool insecure = false, noCache = false;
  std::string tlsVerify = "true", authfile;

  void add(boost::program_options::options_description& opts);
  // Checks the values and completes `options`; an error message (a usage error) or "".
  std::string finish();
};

// Parses ARGS into `opts`, the positional arguments (when `positionals` is given) into it;
// -1 to go on, or the usage exit code after one line on stderr prefixed with `command`.
int parseFlags(const char* command, const std::vector<std::string>& args, boost::program_options::options_description& opts,
               std::vector<std::string>* positionals = nullptr);

}  // namespace kernodeck::cli
