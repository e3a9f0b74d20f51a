// See required_report.h.
#include "kernodeck/attest/required_report.h"

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/exceptions.h"
#include "kernodeck/util/time.h"

using nlohmann::json;

namespace kernodeck::attest {

Status checkRequiredReport(const RequiredReport& req, report::Report& r) {
  const registry::Reference& ref = req.image;
  const Key* key = req.key.get();
  json& sec = r.section("attached_report");
  sec["image"] = ref.registry + "/" + ref.repository + "@" + ref.digest->str();
  sec["keyid"] = key->keyid();
  if (!req.trustedRepositories.empty()) sec["trusted_repositories"] = req.trustedRepositories;
  registry::Client client(ref, req.registry);
  KDK_TRY_ASSIGN(oci::Descriptor manifest, registry::resolveImageManifest(client, ref.digest->str(), req.platform));
  sec["manifest_digest"] = manifest.digest.str();
  KDK_TRY_ASSIGN(std::vector<AttachedReport> found, readReports(client, manifest.digest, key, req.trustedRepositories));
  DecisionPolicy policy{util::nowMs(), std::nullopt, "probe.report"};
  if (req.maxAgeS > 0) policy.maxAgeS = req.maxAgeS;
  policy.maxClockSkewS = req.maxClockSkewS;
  Decision d = decide(found, manifest.digest, policy);
  json list = json::array();
  for (const auto& a : found) {
    json e = {
        {"artifact", a.artifact.digest.str()}, {"verdict", a.verdict}, {"signature", a.signature}, {"keyid", a.keyid}};
    if (!a.subjectName.empty()) e["signed_for"] = a.subjectName;
    if (a.predicate) e["signed_at"] = a.predicate->time;
    if (!a.rewraps.empty()) e["rewraps"] = a.rewraps.size();
    list.push_back(e);
  }
  sec["reports"] = list;
  sec["met"] = d.met();
  sec["outcome"] = outcomeName(d.outcome);
  if (req.maxAgeS > 0) sec["max_age_seconds"] = req.maxAgeS;
  if (d.chosen)
    sec["chosen"] = {{"artifact", d.chosen->artifact.digest.str()},
                     {"verdict", d.chosen->verdict},
                     {"signed_at", d.chosen->predicate->time},
                     {"fail_on", d.chosen->predicate->failOn},
                     {"kernodeck_version", d.chosen->predicate->kernodeckVersion}};
  // What the chosen report's audit waived (--exceptions), as signed: shown, it decides nothing here.
  if (json e = d.chosen ? d.chosen->predicate->exceptions : json(); !e.is_null()) {
    sec["chosen"]["exceptions"] = e;
    r.add("report.exceptions", report::Severity::Info,
          "the chosen report's audit suppressed " + std::to_string(e["findings"].size()) +
              " finding(s) by exceptions:\n" + report::exceptionsSummaryText(e, "  "),
          {{"artifact", d.chosen->artifact.digest.str()}});
  }
  for (auto& f : d.findings) r.add(std::move(f));
  return {};
}

}  // namespace kernodeck::attest
