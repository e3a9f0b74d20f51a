// kernodeck probe: see include/kernodeck/probe/probe_cli.h. Its flags are parsed
// without Boost so the same code builds as the standalone kernodeck-probe. This binary adds
// what the probe-only build lacks: the registry client that checks --require-report.
#include <memory>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/probe/probe_cli.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/time.h"

using nlohmann::json;

namespace kernodeck::cli {

namespace {

// The check of --require-report, through the code path of `kernodeck reports`: resolve the image
// (for an index, this host's platform), read and check its attached reports with the key, and
// judge them (attest::decide, the rule `kernodeck reports` applies too).
Result<probe::ReportCheck> makeReportCheck(const probe::ReportRequirement& req) {
  KDK_TRY_ASSIGN(oci::ResolvedRef image, oci::resolveImageRef(req.image, oci::RefUse::RegistryOnly));
  KDK_TRY_ASSIGN(registry::Reference ref, registry::parseReference(image.ref.registryName()));
  if (!ref.digest)
    return Error::Invalid(
        "image '" + req.image +
        "' is not named by digest (REF@sha256:...): a tag may name another image than the one running");
  KDK_TRY_ASSIGN(attest::Key k, attest::Key::fromFile(req.keyFile));
  auto key = std::make_shared<attest::Key>(std::move(k));
  registry::ClientOptions opts;
  opts.insecure = req.insecure;
  opts.certDir = req.certDir;
  opts.noCache = true;  // a pod's file system may be read-only; a few small documents are read
  opts.retries = req.retries;
  opts.connectTimeoutS = req.timeoutS;
  opts.auth = registry::defaultAuthSources(req.authfile);
  int64_t maxAgeS = req.maxAgeS;
  return probe::ReportCheck([ref, opts, key, maxAgeS](report::Report& r) -> Status {
    json& sec = r.section("attached_report");
    sec["image"] = ref.registry + "/" + ref.repository + "@" + ref.digest->str();
    sec["keyid"] = key->keyid();
    registry::Client client(ref, opts);
    KDK_TRY_ASSIGN(oci::Descriptor manifest,
                   registry::resolveImageManifest(client, ref.digest->str(), oci::hostPlatform()));
    sec["manifest_digest"] = manifest.digest.str();
    KDK_TRY_ASSIGN(std::vector<attest::AttachedReport> found, attest::readReports(client, manifest.digest, key.get()));
    attest::DecisionPolicy policy{util::nowMs(), std::nullopt, "probe.report"};
    if (maxAgeS > 0) policy.maxAgeS = maxAgeS;
    attest::Decision d = attest::decide(found, manifest.digest, policy);
    json list = json::array();
    for (const auto& a : found) {
      json e = {{"artifact", a.artifact.digest.str()},
                {"verdict", a.verdict},
                {"signature", a.signature},
                {"keyid", a.keyid}};
      if (a.predicate) e["signed_at"] = a.predicate->time;
      list.push_back(e);
    }
    sec["reports"] = list;
    sec["met"] = d.met();
    sec["outcome"] = attest::outcomeName(d.outcome);
    if (maxAgeS > 0) sec["max_age_seconds"] = maxAgeS;
    if (d.chosen)
      sec["chosen"] = {{"artifact", d.chosen->artifact.digest.str()},
                       {"verdict", d.chosen->verdict},
                       {"signed_at", d.chosen->predicate->time},
                       {"fail_on", d.chosen->predicate->failOn},
                       {"kernodeck_version", d.chosen->predicate->kernodeckVersion}};
    for (auto& f : d.findings) r.add(std::move(f));
    return {};
  });
}

}  // namespace

int runProbe(const std::vector<std::string>& args) {
  return probe::probeCommand(args, "kernodeck probe", makeReportCheck);
}

int runGate(const std::vector<std::string>& args) {
  return probe::probeCommand(args, "kernodeck gate", makeReportCheck, probe::Mode::Gate);
}

}  // namespace kernodeck::cli
