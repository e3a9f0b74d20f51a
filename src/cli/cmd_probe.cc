// kernodeck probe: see include/kernodeck/probe/probe_cli.h. Its flags are parsed
// without Boost so the same code builds as the standalone kernodeck-probe. This binary adds
// what the probe-only build lacks: the registry client that checks --require-report.
#include <memory>

#include "commands.h"
#include "kernodeck/attest/required_report.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/probe/probe_cli.h"

namespace kernodeck::cli {

namespace {

// The check of --require-report: the image named by digest, the key and the registry options
// read from the flags; attest::checkRequiredReport reads, checks and judges the attached reports
// (for an index, this host's platform's) by the rule `kernodeck reports` applies too.
Result<probe::ReportCheck> makeReportCheck(const probe::ReportRequirement& req) {
  KDK_TRY_ASSIGN(oci::ResolvedRef image, oci::resolveImageRef(req.image, oci::RefUse::RegistryOnly));
  KDK_TRY_ASSIGN(registry::Reference ref, registry::parseReference(image.ref.registryName()));
  if (!ref.digest)
    return Error::Invalid(
        "image '" + req.image +
        "' is not named by digest (REF@sha256:...): a tag may name another image than the one running");
  KDK_TRY_ASSIGN(attest::Key k, attest::loadVerifyKey(req.keyFile, "--key"));
  auto key = std::make_shared<const attest::Key>(std::move(k));
  registry::ClientOptions opts;
  opts.insecure = req.insecure;
  opts.certDir = req.certDir;
  opts.noCache = true;  // a pod's file system may be read-only; a few small documents are read
  opts.retries = req.retries;
  opts.connectTimeoutS = req.connectTimeoutS;
  registry::setTimeout(opts, req.timeoutS);
  opts.auth = registry::defaultAuthSources(req.authfile);
  attest::RequiredReport required{ref,
                                  oci::hostPlatform(),
                                  opts,
                                  key,
                                  req.maxAgeS,
                                  req.maxClockSkewS >= 0 ? req.maxClockSkewS : attest::kDefaultMaxClockSkewS,
                                  req.trustRepositories};
  return probe::ReportCheck(
      [required](report::Report& r) -> Status { return attest::checkRequiredReport(required, r); });
}

}  // namespace

int runProbe(const std::vector<std::string>& args) {
  return probe::probeCommand(args, "kernodeck probe", makeReportCheck);
}

int runGate(const std::vector<std::string>& args) {
  return probe::probeCommand(args, "kernodeck gate", makeReportCheck, probe::Mode::Gate);
}

}  // namespace kernodeck::cli
