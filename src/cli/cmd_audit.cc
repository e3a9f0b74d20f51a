// kernodeck audit IMAGE [--platform OS/ARCH[/VARIANT]] [--format FORMAT] [-o FILE] [--fail-on LEVEL] [--python PATH]...
//   [--exceptions FILE]... [--lock [ENV=]FILE]... [--lock-group NAME]... [--wheels DIR] [--gpu ARCH|MODEL]...
#include <sys/stat.h>

#include <cstdlib>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/attest/audit_attach.h"
#include "kernodeck/audit/exceptions_file.h"
#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/lock_audit.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/report/formats.h"
#include "kernodeck/util/stage_profile.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

// The options of `kernodeck audit`, as given.
struct AuditFlags {
  std::string platform, output, expectOut, failOn = "error", format;
  std::vector<std::string> requirements, pythonTargets, exceptions, gpus;
  std::vector<std::string> locks, lockGroups;  // --lock, --lock-group; --wheels below
  std::string wheels;
  bool json = false, help = false, reanalyze = false;
  RegistryFlags rf;
  // Fleet and attestation options (reports attached to the image, shared layer results).
  bool attach = false, unsignedAttach = false;
  std::string signKey, cacheRepo;
  std::vector<std::string> cacheKeys;
};

// Declares every option of `kernodeck audit` into `opts`, filling `f`.
void addAuditOptions(po::options_description& opts, AuditFlags& f) {
  opts.add_options()("help,h", po::bool_switch(&f.help), "show this help")(
      "platform", po::value(&f.platform),
      "OS/ARCH[/VARIANT] to select from a multi-platform image (default: this host's)")(
      "format", po::value(&f.format),
      "text (default), json (kernodeck.report/v1), sarif (2.1.0), cyclonedx (1.5 JSON), spdx (2.3 JSON), html or "
      "markdown (a CI job summary or PR comment)")("json", po::bool_switch(&f.json), "the same as --format json")(
      "output,o", po::value(&f.output), "write the report to FILE instead of stdout")(
      "fail-on", po::value(&f.failOn), "exit 1 on findings at or above: info, warning, error (default), none")(
      "requirements,r", po::value(&f.requirements)->composing(),
      "check installed packages against this requirements file (repeatable)")(
      "python", po::value(&f.pythonTargets)->composing(),
      "audit exactly this Python environment (an interpreter or an environment root in the image or tree; repeatable) "
      "instead of searching")("exceptions", po::value(&f.exceptions)->composing(),
                              "waive the findings this kernodeck.exceptions/v1 file (YAML or JSON) lists, each until "
                              "its expiry date (repeatable; docs/exceptions.md)")("expect-out", po::value(&f.expectOut),
                              "write the image's kernodeck.expect/v1 expectation to FILE");
  opts.add_options()("lock", po::value(&f.locks)->composing(),
                     "check the Python environment against this lock: a PEP 751 pylock.toml, or a requirements "
                     "file pinning each package with == (its --hash lines the wheels' hashes); ENV=FILE for the "
                     "environment at ENV in the image (repeatable)")(
      "lock-group", po::value(&f.lockGroups)->composing(),
      "with --lock: select this extra or dependency group of the lock instead of its default-groups (repeatable)")(
      "wheels", po::value(&f.wheels),
      "with --lock: a folder of the locked wheels; each is checked against the lock's hash, then every file the "
      "image installed from it against the wheel's own");
  opts.add_options()("gpu", po::value(&f.gpus)->composing(),
                     "judge the image's GPU code against this GPU: a compute capability (9.0), an architecture "
                     "(sm_120) or a model (H100, B200, RTX 5090) (repeatable; docs/audit.md)");
  f.rf.add(opts, /*transfers=*/true, /*defaultTimeoutS=*/3600);
  opts.add_options()(
      "reanalyze", po::bool_switch(&f.reanalyze),
      "registry: analyse again rather than replay the cached outcome of the same analysis of the same image");
  opts.add_options()(
      "cache-repo", po::value(&f.cacheRepo),
      "registry: share layer walk results through this REGISTRY/REPOSITORY (read before walking; pushed after, "
      "signed, with --sign-key)")("cache-key", po::value(&f.cacheKeys)->composing(),
                                  "with --cache-repo: trust shared results signed by this PEM key (repeatable; "
                                  "--sign-key's is trusted too); others are ignored and the layer walked here")(
      "attach", po::bool_switch(&f.attach),
      "push the report to the image's repository as an OCI artifact whose subject is the audited manifest (needs "
      "--sign-key, or --unsigned)")("unsigned", po::bool_switch(&f.unsignedAttach),
                                    "with --attach and no --sign-key: attach the report unsigned, on purpose (no gate "
                                    "counts it; it never replaces a signed one)")(
      "sign-key", po::value(&f.signKey),
      "sign the report --attach pushes (DSSE, in-toto Statement) and the layer results --cache-repo shares with this "
      "PEM key (ECDSA P-256 or Ed25519)");
}

// The keys and the shared layer results: --sign-key (a private key, with --attach or
// --cache-repo), --cache-key (with --cache-repo) and the store --cache-repo opens into
// ao.sharedScans. `trusted` must outlive the store, which holds pointers into it. -1 to go on,
// else the usage exit code (after one line).
int readKeysAndStore(const AuditFlags& f, const registry::ClientOptions& ro, std::optional<attest::Key>& key,
                     std::vector<attest::Key>& trusted, audit::AuditOptions& ao) {
  // A forgotten --sign-key must not push an unsigned report that every gate refuses.
  if (f.attach && f.signKey.empty() && !f.unsignedAttach)
    return usageError("audit",
                      "--attach needs --sign-key KEY (gates count only signed reports); to attach an unsigned report "
                      "on purpose, add --unsigned");
  if (f.unsignedAttach && (!f.attach || !f.signKey.empty()))
    return usageError("audit", "--unsigned goes with --attach and without --sign-key");
  if (!f.signKey.empty() && !f.attach && f.cacheRepo.empty())
    return usageError("audit", "--sign-key signs what --attach or --cache-repo pushes; give one of them too");
  if (!f.signKey.empty()) {
    auto k = attest::Key::fromFile(f.signKey);
    if (!k.ok() || !k->isPrivate())
      return usageError("audit",
                        "--sign-key: " + (k.ok() ? std::string("a private key is needed to sign") : k.error().message));
    key = std::move(*k);
  }
  if (!f.cacheKeys.empty() && f.cacheRepo.empty()) return usageError("audit", "--cache-key is for --cache-repo");
  for (const auto& file : f.cacheKeys) {
    auto k = attest::Key::fromFile(file);
    if (!k.ok()) return usageError("audit", "--cache-key: " + k.error().message);
    trusted.push_back(std::move(*k));
  }
  if (!f.cacheRepo.empty()) {
    if (trusted.empty() && !key)
      return usageError("audit",
                        "--cache-repo needs --cache-key PUB (the key that signs the shared results) or "
                        "--sign-key; unsigned results are never used");
    registry::ScanTrust trust;
    for (const auto& k : trusted) trust.trusted.push_back(&k);
    if (key) trust.trusted.push_back(&*key);
    trust.signer = key ? &*key : nullptr;
    auto store = registry::openRegistryScanStore(f.cacheRepo, ro, trust);
    if (!store.ok()) return usageError("audit", store.error().message);
    ao.sharedScans = *store;
  }
  return -1;
}

// --lock, --lock-group, --wheels into `lock`: each lock read and parsed now, so that a lock that
// is not one is one line and exit 2 before the image is read. -1 to go on, else the exit code.
int readLocks(const AuditFlags& f, audit::LockOptions& lock) {
  if (f.locks.empty() && (!f.lockGroups.empty() || !f.wheels.empty()))
    return usageError("audit", std::string(f.wheels.empty() ? "--lock-group" : "--wheels") + " is for --lock");
  for (const auto& spec : f.locks) {
    auto l = audit::readLockFile(spec);
    if (!l.ok()) {
      std::fprintf(stderr, "kernodeck audit: --lock: %s\n", l.error().message.c_str());
      return report::exitCodeOf(l.error());
    }
    lock.locks.push_back(std::move(*l));
  }
  lock.groups = f.lockGroups;
  if (auto st = audit::checkLockGroups(lock); !st.ok()) return usageError("audit", st.error().message);
  struct stat st {};
  if (!f.wheels.empty() && (::stat(f.wheels.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
    return usageError("audit", "--wheels " + f.wheels + " is not a directory");
  lock.wheelsDir = f.wheels;
  return -1;
}

}  // namespace

int runAudit(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck audit IMAGE [options]\n\n"
      "IMAGE: oci:DIR[:TAG|@DIGEST], oci-archive:FILE[:TAG], docker-archive:FILE[:REPO:TAG|:@N],\n"
      "       dir:DIR (skopeo's directory), rootfs:DIR (an unpacked root filesystem),\n"
      "       a registry reference, or a local path (read by what it holds)\n\noptions");
  AuditFlags f;
  addAuditOptions(opts, f);
  std::vector<std::string> images;
  if (int rc = parseOptions("audit", args, opts, &images); rc >= 0) return rc;
  if (f.help) return printHelp(opts);
  if (images.empty()) return usageError("audit", "an IMAGE is required (try --help)");
  if (images.size() > 1)
    return usageError("audit",
                      "one IMAGE at a time (got " + std::to_string(images.size()) + "; 'kernodeck fleet' audits many)");
  const std::string& image = images[0];
  auto threshold = report::parseFailOn(f.failOn);
  if (!threshold.ok()) return usageError("audit", threshold.error().message);
  auto fmt = report::parseFormatOptions(f.format, f.json);
  if (!fmt.ok()) return usageError("audit", fmt.error().message);
  audit::AuditOptions ao;
  ao.pythonTargets = f.pythonTargets;
  if (!f.platform.empty()) {
    auto p = oci::parsePlatform(f.platform);
    if (!p.ok()) return usageError("audit", p.error().message);
    ao.platform = *p;
  }
  ao.requirementsFiles = f.requirements;
  if (int rc = readLocks(f, ao.lock); rc >= 0) return rc;
  for (const auto& g : f.gpus) {
    auto t = gpu::parseGpuTarget(g);
    if (!t.ok()) return usageError("audit", "--gpu: " + t.error().message);
    ao.gpus.push_back(std::move(*t));
  }
  for (const auto& file : f.exceptions) {
    auto ex = audit::loadExceptionsFile(file, report::todayUtc());
    if (!ex.ok()) return usageError("audit", "--exceptions: " + ex.error().message);
    ao.exceptions.push_back(std::move(*ex));
  }
  if (std::string e = f.rf.finish(); !e.empty()) return usageError("audit", e);
  registry::ClientOptions& ro = f.rf.options;
  ro.progress = ::isatty(2) != 0;
  ao.registry = ro;
  ao.reuseResults = !f.reanalyze;
  // KERNODECK_GPU_CODE=off: the layer walk reads no fatbins (bench/gpucode measures the cost).
  if (const char* g = std::getenv("KERNODECK_GPU_CODE"); g && std::string_view(g) == "off") ao.gpuCode = false;
  std::optional<attest::Key> key;
  std::vector<attest::Key> trusted;  // --cache-key; outlives the store, which holds pointers
  if (int rc = readKeysAndStore(f, ro, key, trusted, ao); rc >= 0) return rc;
  returnLargeFreesToTheKernel();
  audit::AuditResult res = audit::auditImage(image, ao);
  if (f.attach) {
    auto pushed = attest::attachAuditReport(res.report, ro, key ? &*key : nullptr, *threshold);
    if (!pushed.ok()) {
      std::fprintf(stderr, "kernodeck audit: --attach: %s\n", pushed.error().message.c_str());
      // An audit that did not complete goes on to print its report; a push that failed stops here.
      if (!res.report.failed()) return report::kExitIncomplete;
    } else {
      std::fprintf(stderr, "kernodeck audit: attached report %s (and in cosign's layout under the tag %s%s%s)\n",
                   pushed->referrer.digest.str().c_str(), pushed->cosignTag.c_str(),
                   pushed->bundle ? ", and as the Sigstore bundle referrer " : "",
                   pushed->bundle ? pushed->bundle->digest.str().c_str() : "");
    }
  }
  if (!f.expectOut.empty() && !res.report.failed())
    if (int rc = emit(res.expectation.toJson().dump(2) + "\n", f.expectOut)) return rc;
  {
    util::StageTimer t(util::Stage::Report);
    std::string text = report::render(res.report, *fmt, *threshold);
    if (int rc = emit(text, f.output)) return rc;
  }
  // KERNODECK_PROFILE=stages: CPU time per stage on stderr (docs/performance.md), never in the report.
  if (util::stageProfiling())
    std::fprintf(stderr, "kernodeck audit: CPU time per stage\n%s", util::stageTable().c_str());
  if (res.report.failed()) std::fprintf(stderr, "kernodeck audit: %s\n", res.report.firstError().c_str());
  return res.report.exitCode(*threshold);
}

}  // namespace kernodeck::cli
