#include "registry_flags.h"

#include <unistd.h>

#include <cstdio>

#include "kernodeck/report/report.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

void RegistryFlags::add(po::options_description& opts) {
  opts.add_options()
      ("insecure", po::bool_switch(&insecure), "registry: allow plain HTTP and unverified TLS (always allowed for loopback)")
      ("tls-verify", po::value(&tlsVerify), "registry: false is the same as --insecure")
      ("cert-dir", po::value(&options.certDir), "registry: directory of extra CA certificates (*.crt)")
      ("authfile", po::value(&authfile), "registry: credentials file read first (auth.json or docker config.json format)")
      ("cache-dir", po::value(&options.cacheDir), "registry: blob and layer-result cache (default $XDG_CACHE_HOME/kernodeck)")
      ("no-cache", po::bool_switch(&noCache), "registry: neither read nor write the local cache")
      ("retries", po::value(&options.retries), "registry: retries of a failed request (default 4)")
      ("timeout", po::value(&options.connectTimeoutS), "registry: connect timeout in seconds (default 10)");
}

std::string RegistryFlags::finish() {
  if (tlsVerify != "true" && tlsVerify != "false") return "--tls-verify takes true or false";
  if (options.retries < 0 || options.retries > 100 || options.connectTimeoutS <= 0)
    return "--retries and --timeout need sensible positive values";
  options.insecure = insecure || tlsVerify == "false";
  options.noCache = noCache;
  options.auth = registry::defaultAuthSources(authfile);
  options.progress = false;
  return "";
}

int parseFlags(const char* command, const std::vector<std::string>& args, po::options_description& opts,
               std::vector<std::string>* positionals) {
  po::options_description all;
  all.add(opts);
  po::positional_options_description pos;
  if (positionals) {
    all.add_options()("positional", po::value(positionals)->composing());
    pos.add("positional", -1);
  }
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "%s: %s\n", command, e.what());
    return report::kExitUsage;
  }
  return -1;
}

}  // namespace kernodeck::cli
