// See attached_report.h.
#include "kernodeck/attest/attached_report.h"

#include "kernodeck/attest/statement.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::attest {

using nlohmann::json;
using report::Severity;

namespace {

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

std::string verdictOf(const json& r, int failOn) {
  if (!r.is_object() || !r.contains("summary") || !r["summary"].is_object()) return "incomplete";
  const json& s = r["summary"];
  if (!s.value("complete", false)) return "incomplete";
  if (failOn < 0 || !s.contains("findings") || !s["findings"].is_object()) return "pass";
  static const char* names[] = {"info", "warning", "error"};
  for (int sev = failOn; sev <= 2; ++sev)
    if (s["findings"].value(names[sev], 0) > 0) return "fail";
  return "pass";
}

Result<oci::Descriptor> attachReport(const json& rep, const registry::ClientOptions& opts, const Key* key) {
  const json subject = rep.is_object() && rep.contains("subject") ? rep["subject"] : json::object();
  std::string registryName = str(subject, "registry"), repository = str(subject, "repository"),
              digest = str(subject, "manifest_digest");
  if (registryName.empty() || repository.empty() || digest.empty())
    return Error::Invalid("--attach needs a registry image whose manifest was read; the report names none");
  KDK_TRY_ASSIGN(registry::Reference ref, registry::parseReference(registryName + "/" + repository + "@" + digest));
  registry::Client c(ref, opts);
  // The subject descriptor: the audited manifest as the registry serves it.
  KDK_TRY_ASSIGN(registry::Manifest m, c.manifest(digest));
  oci::Descriptor sd;
  sd.mediaType = m.mediaType.empty() ? oci::media::kOciManifest : m.mediaType;
  sd.digest = m.digest;
  sd.size = static_cast<int64_t>(m.bytes.size());

  Statement st;
  st.subjects.push_back({registryName + "/" + repository, {{m.digest.algorithm, m.digest.encoded}}});
  st.predicateType = kReportPredicateType;
  st.predicate = rep;
  std::string payload = serializeStatement(st);
  Envelope env{kInTotoPayloadType, payload, {}};
  if (key) {
    KDK_TRY_ASSIGN(env, signEnvelope(kInTotoPayloadType, payload, *key));
  }
  registry::Artifact a;
  a.artifactType = kReportArtifactType;
  a.blobs.push_back({kDsseMediaType, serializeEnvelope(env)});
  a.subject = sd;
  a.annotations = {{"org.opencontainers.image.created", util::utcTimestamp()},
                   {"dev.kernodeck.verdict", verdictOf(rep)},
                   {"dev.kernodeck.version", kVersion},
                   {"dev.kernodeck.analysis-version", std::to_string(kAnalysisVersion)}};
  if (key) a.annotations["dev.kernodeck.keyid"] = key->keyid();
  return registry::pushArtifact(c, a);
}

namespace {

AttachedReport checkOne(registry::Client& c, const registry::Referrer& ref, const oci::Digest& manifest,
                        const Key* key) {
  AttachedReport out;
  out.artifact = ref.desc;
  out.annotations = ref.desc.annotations;
  std::string where = c.reference().registry + "/" + c.reference().repository + "@" + ref.desc.digest.str();
  std::map<std::string, std::string> ev = {{"artifact", ref.desc.digest.str()}, {"image", manifest.str()}};
  auto problem = [&](const char* code, std::string message) {
    out.problems.push_back({code, Severity::Error, std::move(message), ev});
    return out;
  };
  auto art = registry::fetchArtifact(c, ref.desc.digest.str());
  if (!art.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + art.error().message);
  out.annotations = art->annotations;
  if (!art->subject || !(art->subject->digest == manifest))
    return problem("report.subject.mismatch",
                   "report " + where + " is about " +
                       (art->subject ? art->subject->digest.str() : std::string("no manifest")) +
                       ", not the image's manifest " + manifest.str());
  const oci::Descriptor* envDesc = nullptr;
  for (const auto& b : art->blobs)
    if (b.mediaType == kDsseMediaType) envDesc = &b;
  if (!envDesc) return problem("report.artifact.corrupt", "report " + where + " has no DSSE envelope layer");
  auto bytes = c.smallBlob(*envDesc, 64u << 20);
  if (!bytes.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + bytes.error().message);
  auto env = parseEnvelope(*bytes);
  if (!env.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + env.error().message);
  if (!env->signatures.empty()) out.keyid = env->signatures.front().keyid;
  if (env->payloadType != kInTotoPayloadType)
    return problem("report.artifact.corrupt",
                   "report " + where + ": payload type '" + env->payloadType + "' is not in-toto");
  auto st = parseStatement(env->payload);
  if (!st.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + st.error().message);
  bool names = false;
  for (const auto& s : st->subjects)
    if (auto it = s.digest.find(manifest.algorithm); it != s.digest.end() && it->second == manifest.encoded)
      names = true;
  if (!names)
    return problem("report.subject.mismatch",
                   "report " + where + ": its signed statement is about another image than " + manifest.str());
  if (st->predicateType != kReportPredicateType)
    return problem("report.artifact.corrupt",
                   "report " + where + ": predicate type '" + st->predicateType + "' is not a Kernodeck report");
  out.report = st->predicate;
  out.verdict = verdictOf(st->predicate);
  if (env->signatures.empty()) {
    out.signature = "unsigned";
    if (key) problem("report.signature.missing", "report " + where + " is not signed");
  } else if (!key) {
    out.signature = "unchecked";
  } else if (auto v = verifyEnvelope(*env, *key); v.ok()) {
    out.signature = "verified";
  } else {
    out.signature = "invalid";
    problem("report.signature.invalid", "report " + where + ": " + v.error().message);
  }
  return out;
}

}  // namespace

Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key) {
  KDK_TRY_ASSIGN(std::vector<registry::Referrer> refs, registry::listReferrers(c, manifest, kReportArtifactType));
  std::vector<AttachedReport> out;
  for (const auto& r : refs) out.push_back(checkOne(c, r, manifest, key));
  return out;
}

const AttachedReport* newestGood(const std::vector<AttachedReport>& reports) {
  const AttachedReport* best = nullptr;
  for (const auto& r : reports) {
    if (!r.problems.empty() || !r.report) continue;
    auto created = [](const AttachedReport& a) {
      auto it = a.annotations.find("org.opencontainers.image.created");
      return it == a.annotations.end() ? std::string() : it->second;
    };
    if (!best || created(r) >= created(*best)) best = &r;
  }
  return best;
}

Requirement requirePassingReport(const std::vector<AttachedReport>& reports, const oci::Digest& manifest) {
  Requirement out;
  std::map<std::string, std::string> ev = {{"image", manifest.str()}};
  out.chosen = newestGood(reports);
  out.met = out.chosen && out.chosen->verdict == "pass";
  for (const auto& r : reports)
    for (auto p : r.problems) {
      if (out.met) p.severity = Severity::Warning;
      out.findings.push_back(std::move(p));
    }
  if (reports.empty()) {
    out.findings.push_back({"probe.report.missing", Severity::Error,
                            "no Kernodeck report is attached to " + manifest.str() + ": this image was not audited",
                            ev});
  } else if (!out.chosen) {
    out.findings.push_back({"probe.report.unverified", Severity::Error,
                            "none of the " + std::to_string(reports.size()) + " report(s) attached to " +
                                manifest.str() + " passes its checks (about this image, signed by the required key)",
                            ev});
  } else if (!out.met) {
    ev["artifact"] = out.chosen->artifact.digest.str();
    out.findings.push_back(
        {"probe.report.failed", Severity::Error,
         "the newest verified report of " + manifest.str() + " (" + out.chosen->artifact.digest.str() + ") says " +
             (out.chosen->verdict.empty() ? std::string("nothing") : out.chosen->verdict) + ", not pass",
         ev});
  }
  return out;
}

}  // namespace kernodeck::attest
