#include "registry_flags.h"

#include "kernodeck/util/time.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

void RegistryFlags::add(po::options_description& opts, bool transfers, int64_t defaultTimeout) {
  defaultTimeoutS = defaultTimeout;
  timeoutHelp = "registry: the overall deadline of every registry exchange, a duration (default " +
                util::formatDurationSeconds(defaultTimeout) + "); past it the step fails, exit 3";
  opts.add_options()("insecure", po::bool_switch(&insecure),
                     "registry: allow plain HTTP and unverified TLS (always allowed for loopback)")(
      "tls-verify", po::value(&tlsVerify), "registry: false is the same as --insecure")(
      "cert-dir", po::value(&options.certDir), "registry: directory of extra CA certificates (*.crt)")(
      "authfile", po::value(&authfile),
      "registry: credentials file read first (auth.json or docker config.json format)")(
      "cache-dir", po::value(&options.cacheDir),
      "registry: blob and layer-result cache, a directory of yours with mode 0700 (default "
      "$XDG_CACHE_HOME/kernodeck, else $HOME/.cache/kernodeck)")("no-cache", po::bool_switch(&noCache),
                                                                 "registry: neither read nor write the local cache")(
      "retries", po::value(&options.retries), "registry: retries of a failed request (default 4)")(
      "timeout", po::value(&timeout), timeoutHelp.c_str())("connect-timeout", po::value(&options.connectTimeoutS),
                                                           "registry: connect timeout in seconds (default 10)");
  if (transfers)
    opts.add_options()("retry-max-time", po::value(&options.retryMaxSeconds),
                       "registry: seconds spent waiting to retry one request (default 60)")(
        "stall-timeout", po::value(&options.stallTimeoutS),
        "registry: abort a transfer idle for this many seconds (default 30)");
}

std::string RegistryFlags::finish() {
  if (tlsVerify != "true" && tlsVerify != "false") return "--tls-verify takes true or false";
  if (options.retries < 0 || options.retries > 100 || !(options.retryMaxSeconds >= 0) || options.connectTimeoutS <= 0 ||
      options.stallTimeoutS <= 0)
    return "--retries, --retry-max-time, --connect-timeout and --stall-timeout need sensible positive values";
  int64_t seconds = defaultTimeoutS;
  if (!timeout.empty()) {
    auto d = util::parseDurationSeconds(timeout);
    if (!d)
      return "--timeout needs a duration such as 30s, 10m or 2h, not '" + timeout +
             "' (the connect timeout in seconds is --connect-timeout)";
    seconds = *d;
  }
  registry::setTimeout(options, seconds);
  options.insecure = insecure || tlsVerify == "false";
  options.noCache = noCache;
  options.auth = registry::defaultAuthSources(authfile);
  options.progress = false;
  return "";
}

}  // namespace kernodeck::cli
