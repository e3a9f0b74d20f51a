// See attached_report.h.
#include "kernodeck/attest/attached_report.h"

#include <algorithm>
#include <climits>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/attest/statement.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/time.h"
#include "kernodeck/version.h"

namespace kernodeck::attest {

using nlohmann::json;
using report::Severity;

Result<Attached> attachReport(const json& rep, const registry::ClientOptions& opts, const Key* key, int failOn) {
  KDK_TRY_ASSIGN(report::ReportDoc doc, report::parseReportDoc(rep));
  const std::string &registryName = doc.subjectRegistry, &repository = doc.subjectRepository,
                    &digest = doc.manifestDigest;
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

  ReportPredicate predicate = makePredicate(rep, failOn, util::nowMs());
  Statement st;
  st.subjects.push_back({registryName + "/" + repository, {{m.digest.algorithm, m.digest.encoded}}});
  st.predicateType = kReportPredicateType;
  st.predicate = predicateJson(predicate);
  std::string payload = serializeStatement(st);
  Envelope env{kInTotoPayloadType, payload, {}};
  if (key) {
    KDK_TRY_ASSIGN(env, signEnvelope(kInTotoPayloadType, payload, *key));
  }
  std::string envelope = serializeEnvelope(env);
  registry::Artifact a;
  a.artifactType = kReportArtifactType;
  a.blobs.push_back({kDsseMediaType, envelope});
  a.subject = sd;
  // For people and listings only: nothing reads these to decide (the signed predicate says it).
  a.annotations = {{"org.opencontainers.image.created", predicate.time},
                   {"dev.kernodeck.verdict", predicate.verdict},
                   {"dev.kernodeck.version", kVersion},
                   {"dev.kernodeck.analysis-version", std::to_string(kAnalysisVersion)}};
  if (key) a.annotations["dev.kernodeck.keyid"] = key->keyid();
  Attached out;
  KDK_TRY_ASSIGN(out.referrer, registry::pushArtifact(c, a));
  out.cosignTag = cosignAttestationTag(m.digest);
  KDK_TRY_ASSIGN(out.cosignManifest, pushCosignAttestation(c, m.digest, envelope, kReportPredicateType));
  return out;
}

namespace {

AttachedReport checkOne(registry::Client& c, const registry::Referrer& ref, const oci::Digest& manifest,
                        const Key* key) {
  AttachedReport out;
  out.artifact = ref.desc;
  out.annotations = ref.desc.annotations;
  std::string repo = c.reference().registry + "/" + c.reference().repository;
  std::string where = repo + "@" + ref.desc.digest.str();
  std::map<std::string, std::string> ev = {{"artifact", ref.desc.digest.str()}, {"image", manifest.str()}};
  auto problem = [&](const char* code, std::string message) {
    out.problems.push_back({code, Severity::Error, util::printable(message, 600), ev});
    return out;
  };
  if (!ref.problem.empty()) {
    ev["artifact"] = ref.digest;
    ev["position"] = std::to_string(ref.position);
    return problem("report.referrer.invalid", "referrer " + std::to_string(ref.position) + " of " + manifest.str() +
                                                  " in " + repo +
                                                  (ref.digest.empty() ? std::string() : " (" + ref.digest + ")") +
                                                  " is not a valid descriptor (" + ref.problem + "); skipped");
  }
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
  // The signature first: nothing of an unverified payload decides anything.
  if (env->signatures.empty()) {
    out.signature = "unsigned";
    if (key) problem("report.signature.missing", "report " + where + " is not signed");
  } else if (!key) {
    out.signature = "unchecked";
  } else if (auto v = verifyEnvelope(*env, *key); v.ok()) {
    out.signature = "verified";
  } else {
    out.signature = "invalid";
    return problem("report.signature.invalid", "report " + where + ": " + v.error().message);
  }
  auto st = parseStatement(env->payload);
  if (!st.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + st.error().message);
  bool names = false;
  for (const auto& s : st->subjects)
    if (auto it = s.digest.find(manifest.algorithm); it != s.digest.end() && it->second == manifest.encoded)
      names = true;
  if (!names)
    return problem("report.subject.mismatch",
                   "report " + where + ": its signed statement is about another image than " + manifest.str());
  if (st->predicateType == kReportPredicateTypeV1)
    return problem(
        "report.predicate.outdated",
        "report " + where +
            " has an earlier Kernodeck's predicate (v1), which carries no signed time, so it cannot be ordered "
            "against other reports; it does not count (audit the image again)");
  if (st->predicateType != kReportPredicateType)
    return problem("report.artifact.corrupt",
                   "report " + where + ": predicate type '" + st->predicateType + "' is not a Kernodeck report");
  auto pred = parsePredicate(st->predicate);
  if (!pred.ok()) return problem("report.predicate.invalid", "report " + where + ": " + pred.error().message);
  out.report = pred->report;
  out.verdict = pred->verdict;
  out.predicate = std::move(*pred);
  return out;
}

// Which of the listed referrers are read when more than kMaxReportReferrers are listed: the newest
// by the created annotation each entry carries (audit --attach writes the signed time there), then
// the later listed (the fallback index appends), so whatever is left out is older than all that is
// read: a newer fail is never skipped while an older pass counts, and reports added after many
// others are still seen. Returns the indexes to read, in listing order.
std::vector<size_t> referrersToRead(const std::vector<registry::Referrer>& refs) {
  std::vector<size_t> order(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) order[i] = i;
  if (refs.size() <= kMaxReportReferrers) return order;
  std::vector<int64_t> created(refs.size(), INT64_MIN);  // absent or unreadable: oldest
  for (size_t i = 0; i < refs.size(); ++i)
    if (auto it = refs[i].desc.annotations.find("org.opencontainers.image.created");
        it != refs[i].desc.annotations.end())
      created[i] = util::parseTimestampMs(it->second).value_or(INT64_MIN);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return created[a] != created[b] ? created[a] > created[b] : a > b; });
  order.resize(kMaxReportReferrers);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key) {
  KDK_TRY_ASSIGN(std::vector<registry::Referrer> refs, registry::listReferrers(c, manifest, kReportArtifactType));
  std::vector<AttachedReport> out;
  for (size_t i : referrersToRead(refs)) out.push_back(checkOne(c, refs[i], manifest, key));
  if (refs.size() > kMaxReportReferrers) {
    // The rest are never fetched: one problem says how many, and the decision is made on those read.
    AttachedReport rest;
    rest.problems.push_back({"report.referrers.too_many",
                             Severity::Error,
                             std::to_string(refs.size()) + " reports are attached to " + manifest.str() + " in " +
                                 c.reference().registry + "/" + c.reference().repository + "; only the newest " +
                                 std::to_string(kMaxReportReferrers) +
                                 " by their created annotation were read, the other " +
                                 std::to_string(refs.size() - kMaxReportReferrers) + " skipped",
                             {{"image", manifest.str()}, {"count", std::to_string(refs.size())}}});
    out.push_back(std::move(rest));
  }
  return out;
}

}  // namespace kernodeck::attest
