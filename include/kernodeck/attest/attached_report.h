// Audit reports attached to the images they audited: the kernodeck.report/v1 report becomes
// the predicate of an in-toto Statement whose subject is the audited manifest, wrapped in a
// DSSE envelope (signed when a key is given), pushed as an OCI artifact
// (artifactType application/vnd.kernodeck.report.v1+json) whose `subject` is that manifest.
// Reading them back checks each artifact: its subject, its envelope, its statement's subject
// and, with a key, its signature; every problem is a finding, not an error.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/report/report.h"

namespace kernodeck::attest {

inline constexpr const char* kReportArtifactType = "application/vnd.kernodeck.report.v1+json";
inline constexpr const char* kDsseMediaType = "application/vnd.dsse.envelope.v1+json";

// "pass", "fail" (a finding at or above `failOn`; -1: never) or "incomplete" (a step failed),
// from a kernodeck.report/v1 JSON report.
std::string verdictOf(const nlohmann::json& report, int failOn = static_cast<int>(report::Severity::Error));

// Attaches a report of a registry image (its subject names registry, repository and
// manifest_digest) to that manifest; signs it with `key` when given. Returns the artifact.
Result<oci::Descriptor> attachReport(const nlohmann::json& report, const registry::ClientOptions& opts, const Key* key);

struct AttachedReport {
  oci::Descriptor artifact;
  std::map<std::string, std::string> annotations;
  std::optional<nlohmann::json> report;  // the predicate, when the artifact could be read
  std::string verdict;                   // of the predicate; empty when unreadable
  std::string signature;                 // "verified", "invalid", "unsigned", "unchecked" (no key given)
  std::string keyid;                     // of the first signature
  std::vector<report::Finding> problems;
};

// The reports attached to `manifest` in the client's repository, each checked (the signature
// only with `key`). An error only when the referrers cannot be listed.
Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key);

// The newest report of `reports` that has no problem; nullptr when none.
const AttachedReport* newestGood(const std::vector<AttachedReport>& reports);

// What a node requires before it runs an image (`kernodeck probe --require-report`), judged from
// the reports attached to its manifest as readReports checked them with the node's key: the
// newest report without problems (so signed by that key, about that manifest) says "pass".
struct Requirement {
  const AttachedReport* chosen = nullptr;  // the newest good report; nullptr when none
  bool met = false;
  // Errors when not met: probe.report.missing (none attached), probe.report.unverified (none
  // passes its checks; each one's problems beside it), probe.report.failed (the chosen one's
  // verdict is not pass). When met, the other reports' problems as warnings.
  std::vector<report::Finding> findings;
};
Requirement requirePassingReport(const std::vector<AttachedReport>& reports, const oci::Digest& manifest);

}  // namespace kernodeck::attest
