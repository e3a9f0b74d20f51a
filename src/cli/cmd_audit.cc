// kernodeck audit IMAGE [--platform OS/ARCH[/VARIANT]] [--format FORMAT] [-o FILE] [--fail-on LEVEL] [--python PATH]...
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/audit/image_audit.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/report/formats.h"
#include "kernodeck/util/stage_profile.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int runAudit(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck audit IMAGE [options]\n\n"
      "IMAGE: oci:DIR[:TAG|@DIGEST], oci-archive:FILE[:TAG], docker-archive:FILE[:REPO:TAG|:@N],\n"
      "       dir:DIR (skopeo's directory), rootfs:DIR (an unpacked root filesystem),\n"
      "       a registry reference, or a local path (read by what it holds)\n\noptions");
  std::string platform, output, expectOut, failOn = "error", format;
  std::vector<std::string> requirements, pythonTargets;
  bool json = false, help = false, reanalyze = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "platform", po::value(&platform),
      "OS/ARCH[/VARIANT] to select from a multi-platform image (default: this host's)")(
      "format", po::value(&format),
      "text (default), json (kernodeck.report/v1), sarif (2.1.0), cyclonedx (1.5 JSON), spdx (2.3 JSON) or html")(
      "json", po::bool_switch(&json), "the same as --format json")("output,o", po::value(&output),
                                                                   "write the report to FILE instead of stdout")(
      "fail-on", po::value(&failOn), "exit 1 on findings at or above: info, warning, error (default), none")(
      "requirements,r", po::value(&requirements)->composing(),
      "check installed packages against this requirements file (repeatable)")(
      "python", po::value(&pythonTargets)->composing(),
      "audit exactly this Python environment (an interpreter or an environment root in the image or tree; repeatable) "
      "instead of searching")("expect-out", po::value(&expectOut),
                              "write the image's kernodeck.expect/v1 expectation to FILE");
  rf.add(opts, /*transfers=*/true);
  opts.add_options()(
      "reanalyze", po::bool_switch(&reanalyze),
      "registry: analyse again rather than replay the cached outcome of the same analysis of the same image");
  // Fleet and attestation options (reports attached to the image, shared layer results).
  bool attach = false;
  std::string signKey, cacheRepo;
  std::vector<std::string> cacheKeys;
  opts.add_options()(
      "cache-repo", po::value(&cacheRepo),
      "registry: share layer walk results through this REGISTRY/REPOSITORY (read before walking; pushed after, "
      "signed, with --sign-key)")("cache-key", po::value(&cacheKeys)->composing(),
                                  "with --cache-repo: trust shared results signed by this PEM key (repeatable; "
                                  "--sign-key's is trusted too); others are ignored and the layer walked here")(
      "attach", po::bool_switch(&attach),
      "push the report to the image's repository as an OCI artifact whose subject is the audited manifest")(
      "sign-key", po::value(&signKey),
      "sign the report --attach pushes (DSSE, in-toto Statement) and the layer results --cache-repo shares with this "
      "PEM key (ECDSA P-256 or Ed25519)");
  std::vector<std::string> images;
  if (int rc = parseOptions("audit", args, opts, &images); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (images.empty()) return usageError("audit", "an IMAGE is required (try --help)");
  if (images.size() > 1)
    return usageError("audit",
                      "one IMAGE at a time (got " + std::to_string(images.size()) + "; 'kernodeck fleet' audits many)");
  const std::string& image = images[0];
  auto threshold = report::parseFailOn(failOn);
  if (!threshold.ok()) return usageError("audit", threshold.error().message);
  auto fmt = report::parseFormatOptions(format, json);
  if (!fmt.ok()) return usageError("audit", fmt.error().message);
  audit::AuditOptions ao;
  ao.pythonTargets = pythonTargets;
  if (!platform.empty()) {
    auto p = oci::parsePlatform(platform);
    if (!p.ok()) return usageError("audit", p.error().message);
    ao.platform = *p;
  }
  ao.requirementsFiles = requirements;
  if (std::string e = rf.finish(); !e.empty()) return usageError("audit", e);
  registry::ClientOptions& ro = rf.options;
  ro.progress = ::isatty(2) != 0;
  ao.registry = ro;
  ao.reuseResults = !reanalyze;
  std::optional<attest::Key> key;
  if (!signKey.empty() && !attach && cacheRepo.empty())
    return usageError("audit", "--sign-key signs what --attach or --cache-repo pushes; give one of them too");
  if (!signKey.empty()) {
    auto k = attest::Key::fromFile(signKey);
    if (!k.ok() || !k->isPrivate())
      return usageError("audit",
                        "--sign-key: " + (k.ok() ? std::string("a private key is needed to sign") : k.error().message));
    key = std::move(*k);
  }
  std::vector<attest::Key> trusted;  // --cache-key; outlives the store, which holds pointers
  if (!cacheKeys.empty() && cacheRepo.empty()) return usageError("audit", "--cache-key is for --cache-repo");
  for (const auto& f : cacheKeys) {
    auto k = attest::Key::fromFile(f);
    if (!k.ok()) return usageError("audit", "--cache-key: " + k.error().message);
    trusted.push_back(std::move(*k));
  }
  if (!cacheRepo.empty()) {
    if (trusted.empty() && !key)
      return usageError("audit",
                        "--cache-repo needs --cache-key PUB (the key that signs the shared results) or "
                        "--sign-key; unsigned results are never used");
    registry::ScanTrust trust;
    for (const auto& k : trusted) trust.trusted.push_back(&k);
    if (key) trust.trusted.push_back(&*key);
    trust.signer = key ? &*key : nullptr;
    auto store = registry::openRegistryScanStore(cacheRepo, ro, trust);
    if (!store.ok()) return usageError("audit", store.error().message);
    ao.sharedScans = *store;
  }
  audit::AuditResult res = audit::auditImage(image, ao);
  if (attach && res.report.failed())
    std::fprintf(stderr, "kernodeck audit: --attach: the audit did not complete; nothing attached\n");
  if (attach && !res.report.failed()) {
    auto pushed = attest::attachReport(res.report.toJson(*threshold), ro, key ? &*key : nullptr, *threshold);
    if (!pushed.ok()) {
      std::fprintf(stderr, "kernodeck audit: --attach: %s\n", pushed.error().message.c_str());
      return report::kExitIncomplete;
    }
    std::fprintf(stderr, "kernodeck audit: attached report %s (and in cosign's layout under the tag %s)\n",
                 pushed->referrer.digest.str().c_str(), pushed->cosignTag.c_str());
  }
  if (!expectOut.empty() && !res.report.failed())
    if (int rc = emit(res.expectation.toJson().dump(2) + "\n", expectOut)) return rc;
  {
    util::StageTimer t(util::Stage::Report);
    std::string text = report::render(res.report, *fmt, *threshold);
    if (int rc = emit(text, output)) return rc;
  }
  // KERNODECK_PROFILE=stages: CPU time per stage on stderr (docs/performance.md), never in the report.
  if (util::stageProfiling())
    std::fprintf(stderr, "kernodeck audit: CPU time per stage\n%s", util::stageTable().c_str());
  if (res.report.failed()) std::fprintf(stderr, "kernodeck audit: %s\n", res.report.firstError().c_str());
  return res.report.exitCode(*threshold);
}

}  // namespace kernodeck::cli
