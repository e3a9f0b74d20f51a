// kernodeck audit IMAGE [--platform OS/ARCH[/VARIANT]] [--format FORMAT] [-o FILE] [--fail-on LEVEL] [--python PATH]...
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/audit/image_audit.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/report/formats.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int runAudit(const std::vector<std::string>& args) {
  po::options_description opts("usage: kernodeck audit IMAGE [options]\n\n"
                               "IMAGE: oci:DIR[:TAG|@DIGEST], oci-archive:FILE[:TAG], docker-archive:FILE[:REPO:TAG|:@N],\n"
                               "       dir:DIR (skopeo's directory), rootfs:DIR (an unpacked root filesystem),\n"
                               "       a registry reference, or a local path (read by what it holds)\n\noptions");
  std::string image, platform, output, expectOut, failOn = "error", format;
  std::vector<std::string> requirements, pythonTargets;
  bool json = false, help = false, insecure = false, noCache = false, reanalyze = false;
  std::string tlsVerify = "true";
  registry::ClientOptions ro;
  std::string authfile;
  opts.add_options()
      ("help,h", po::bool_switch(&help), "show this help")
      ("platform", po::value(&platform), "OS/ARCH[/VARIANT] to select from a multi-platform image (default: this host's)")
      ("format", po::value(&format), "text (default), json (kernodeck.report/v1), sarif (2.1.0), cyclonedx (1.5 JSON), spdx (2.3 JSON) or html")
      ("json", po::bool_switch(&json), "the same as --format json")
      ("output,o", po::value(&output), "write the report to FILE instead of stdout")
      ("fail-on", po::value(&failOn), "exit 1 on findings at or above: info, warning, error (default), none")
      ("requirements,r", po::value(&requirements)->composing(), "check installed packages against this requirements file (repeatable)")
      ("python", po::value(&pythonTargets)->composing(), "audit exactly this Python environment (an interpreter or an environment root in the image or tree; repeatable) instead of searching")
      ("expect-out", po::value(&expectOut), "write the image's kernodeck.expect/v1 expectation to FILE")
      ("insecure", po::bool_switch(&insecure), "registry: allow plain HTTP and unverified TLS (always allowed for loopback)")
      ("tls-verify", po::value(&tlsVerify), "registry: false is the same as --insecure")
      ("cert-dir", po::value(&ro.certDir), "registry: directory of extra CA certificates (*.crt)")
      ("authfile", po::value(&authfile), "registry: credentials file read first (auth.json or docker config.json format)")
      ("cache-dir", po::value(&ro.cacheDir), "registry: blob cache (default $XDG_CACHE_HOME/kernodeck)")
      ("no-cache", po::bool_switch(&noCache), "registry: neither read nor write the blob cache")
      ("reanalyze", po::bool_switch(&reanalyze), "registry: analyse again rather than replay the cached outcome of the same analysis of the same image")
      ("retries", po::value(&ro.retries), "registry: retries of a failed request (default 4)")
      ("retry-max-time", po::value(&ro.retryMaxSeconds), "registry: seconds spent waiting to retry one request (default 60)")
      ("timeout", po::value(&ro.connectTimeoutS), "registry: connect timeout in seconds (default 10)")
      ("stall-timeout", po::value(&ro.stallTimeoutS), "registry: abort a transfer idle for this many seconds (default 30)");
  // Fleet and attestation options (reports attached to the image, shared layer results).
  bool attach = false;
  std::string signKey, cacheRepo;
  opts.add_options()
      ("cache-repo", po::value(&cacheRepo), "registry: share layer walk results through this REGISTRY/REPOSITORY (read before walking, pushed after)")
      ("attach", po::bool_switch(&attach), "push the report to the image's repository as an OCI artifact whose subject is the audited manifest")
      ("sign-key", po::value(&signKey), "with --attach: sign the report (DSSE, in-toto Statement) with this PEM key (ECDSA P-256 or Ed25519)");
  po::options_description hidden;
  hidden.add_options()("image", po::value(&image));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("image", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "kernodeck audit: %s\n", e.what());
    return report::kExitUsage;
  }
  if (help) {
    std::cout << opts << "\n" << kExitCodesHelp;
    return 0;
  }
  if (image.empty()) {
    std::fprintf(stderr, "kernodeck audit: an IMAGE is required (try --help)\n");
    return report::kExitUsage;
  }
  auto threshold = report::parseFailOn(failOn);
  if (!threshold.ok()) {
    std::fprintf(stderr, "kernodeck audit: %s\n", threshold.error().message.c_str());
    return report::kExitUsage;
  }
  auto fmt = report::parseFormatOptions(format, json);
  if (!fmt.ok()) {
    std::fprintf(stderr, "kernodeck audit: %s\n", fmt.error().message.c_str());
    return report::kExitUsage;
  }
  audit::AuditOptions ao;
  ao.pythonTargets = pythonTargets;
  if (!platform.empty()) {
    auto p = oci::parsePlatform(platform);
    if (!p.ok()) {
      std::fprintf(stderr, "kernodeck audit: %s\n", p.error().message.c_str());
      return report::kExitUsage;
    }
    ao.platform = *p;
  }
  ao.requirementsFiles = requirements;
  if (tlsVerify != "true" && tlsVerify != "false") {
    std::fprintf(stderr, "kernodeck audit: --tls-verify takes true or false\n");
    return report::kExitUsage;
  }
  if (ro.retries < 0 || ro.retries > 100 || !(ro.retryMaxSeconds >= 0) || ro.connectTimeoutS <= 0 || ro.stallTimeoutS <= 0) {
    std::fprintf(stderr, "kernodeck audit: --retries, --retry-max-time, --timeout and --stall-timeout need sensible positive values\n");
    return report::kExitUsage;
  }
  ro.insecure = insecure || tlsVerify == "false";
  ro.noCache = noCache;
  ro.auth = registry::defaultAuthSources(authfile);
  ro.progress = ::isatty(2) != 0;
  ao.registry = ro;
  ao.reuseResults = !reanalyze;
  std::optional<attest::Key> key;
  if (!signKey.empty() && !attach) {
    std::fprintf(stderr, "kernodeck audit: --sign-key signs the report --attach pushes; give --attach too\n");
    return report::kExitUsage;
  }
  if (!signKey.empty()) {
    auto k = attest::Key::fromFile(signKey);
    if (!k.ok() || !k->isPrivate()) {
      std::fprintf(stderr, "kernodeck audit: --sign-key: %s\n", k.ok() ? "a private key is needed to sign" : k.error().message.c_str());
      return report::kExitUsage;
    }
    key = std::move(*k);
  }
  if (!cacheRepo.empty()) {
    auto store = registry::openRegistryScanStore(cacheRepo, ro);
    if (!store.ok()) {
      std::fprintf(stderr, "kernodeck audit: %s\n", store.error().message.c_str());
      return report::kExitUsage;
    }
    ao.sharedScans = *store;
  }
  audit::AuditResult res = audit::auditImage(image, ao);
  if (attach && res.report.failed()) std::fprintf(stderr, "kernodeck audit: --attach: the audit did not complete; nothing attached\n");
  if (attach && !res.report.failed()) {
    auto pushed = attest::attachReport(res.report.toJson(), ro, key ? &*key : nullptr);
    if (!pushed.ok()) {
      std::fprintf(stderr, "kernodeck audit: --attach: %s\n", pushed.error().message.c_str());
      return report::kExitIncomplete;
    }
    std::fprintf(stderr, "kernodeck audit: attached report %s\n", pushed->digest.str().c_str());
  }
  if (!expectOut.empty() && !res.report.failed())
    if (int rc = emit(res.expectation.toJson().dump(2) + "\n", expectOut)) return rc;
  std::string text = report::render(res.report, *fmt, *threshold);
  if (int rc = emit(text, output)) return rc;
  if (res.report.failed()) std::fprintf(stderr, "kernodeck audit: %s\n", res.report.firstError().c_str());
  return res.report.exitCode(*threshold);
}

}  // namespace kernodeck::cli
