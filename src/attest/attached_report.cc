// See attached_report.h.
#include "kernodeck/attest/attached_report.h"

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <set>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/attest/sigstore_bundle.h"
#include "kernodeck/attest/statement.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/hash.h"
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
  if (envelope.size() > kMaxReportEnvelopeBytes)
    return Error::Invalid("the signed report envelope is " + std::to_string(envelope.size()) +
                          " bytes, more than readers fetch (" + std::to_string(kMaxReportEnvelopeBytes) + ")");
  registry::Artifact a;
  a.artifactType = kReportArtifactType;
  // The envelope (small: verdict, counts, time, the report's digest) and the report it names.
  a.blobs.push_back({kDsseMediaType, envelope});
  a.blobs.push_back({kReportBlobMediaType, reportBlob(rep)});
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
  KDK_TRY_ASSIGN(out.cosignManifest,
                 pushCosignAttestation(c, m.digest, envelope, kReportPredicateType, /*replaces=*/key != nullptr));
  if (key) {
    KDK_TRY_ASSIGN(out.bundle, pushSigstoreBundle(c, sd, env, *key, kReportPredicateType));
  }
  return out;
}

namespace {

// What one artifact manifest of the listing says: its envelope's descriptor, or the problem that
// makes it unusable (a finding).
struct ListedArtifact {
  const registry::Referrer* ref = nullptr;
  std::optional<oci::Descriptor> envelope;
  std::vector<report::Finding> problems;
};

std::string repoOf(registry::Client& c) { return c.reference().registry + "/" + c.reference().repository; }

// Fetches (bounded) and checks one listed artifact manifest: about this image, one DSSE layer of
// a size a report envelope can have. Nothing in it is trusted; it only says which envelope to read.
ListedArtifact readListed(registry::Client& c, const registry::Referrer& ref, const oci::Digest& manifest) {
  ListedArtifact out;
  out.ref = &ref;
  std::string where = repoOf(c) + "@" + ref.desc.digest.str();
  std::map<std::string, std::string> ev = {{"artifact", ref.desc.digest.str()}, {"image", manifest.str()}};
  auto problem = [&](const char* code, std::string message) {
    out.problems.push_back({code, Severity::Error, util::printable(message, 600), ev});
    return out;
  };
  if (!ref.problem.empty()) {
    ev["artifact"] = ref.digest;
    ev["position"] = std::to_string(ref.position);
    return problem("report.referrer.invalid", "referrer " + std::to_string(ref.position) + " of " + manifest.str() +
                                                  " in " + repoOf(c) +
                                                  (ref.digest.empty() ? std::string() : " (" + ref.digest + ")") +
                                                  " is not a valid descriptor (" + ref.problem + "); skipped");
  }
  if (ref.desc.size < 0 || static_cast<uint64_t>(ref.desc.size) > kMaxReportManifestBytes)
    return problem("report.artifact.too_large", "report " + where + " is listed with " + std::to_string(ref.desc.size) +
                                                    " bytes, more than a report's manifest can need (" +
                                                    std::to_string(kMaxReportManifestBytes) + "); not fetched");
  auto art = registry::fetchArtifact(c, ref.desc.digest.str(), kMaxReportManifestBytes);
  if (!art.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + art.error().message);
  if (!art->subject || !(art->subject->digest == manifest))
    return problem("report.subject.mismatch",
                   "report " + where + " is about " +
                       (art->subject ? art->subject->digest.str() : std::string("no manifest")) +
                       ", not the image's manifest " + manifest.str());
  // Which layout is judged by the manifest itself (its bytes are fixed by its digest), never by
  // the listing's artifactType, which whoever writes the index chooses.
  if (art->artifactType == kSigstoreBundleMediaType) {
    // cosign 3's bundle referrer: one layer, the bundle (sigstore_bundle.h).
    if (art->blobs.size() != 1 || art->blobs.front().mediaType != kSigstoreBundleMediaType)
      return problem("report.artifact.corrupt",
                     "report " + where + " is a Sigstore bundle referrer without exactly one bundle layer");
    out.envelope = art->blobs.front();
  } else {
    for (const auto& b : art->blobs) {
      if (b.mediaType != kDsseMediaType) continue;
      if (out.envelope)
        return problem("report.artifact.corrupt", "report " + where + " has more than one DSSE envelope layer");
      out.envelope = b;
    }
  }
  if (!out.envelope) return problem("report.artifact.corrupt", "report " + where + " has no DSSE envelope layer");
  if (out.envelope->size < 0 || static_cast<uint64_t>(out.envelope->size) > kMaxReportEnvelopeBytes) {
    ev["envelope"] = out.envelope->digest.str();
    out.envelope.reset();
    return problem("report.envelope.too_large",
                   "report " + where + ": its envelope is listed with more bytes than a report envelope can need (" +
                       std::to_string(kMaxReportEnvelopeBytes) + "); not fetched");
  }
  return out;
}

// Reads and checks one envelope (fetched once, whatever number of manifests wrap it). With a
// key the signature is verified before anything of the payload is decoded as JSON; an envelope
// that does not verify is named and its payload never read. Without a key the payload is read
// only to be listed (signature "unsigned" or "unchecked"): decide() counts only verified reports.
void checkEnvelope(registry::Client& c, const oci::Descriptor& envDesc, const oci::Digest& manifest, const Key* key,
                   const std::vector<std::string>& trusted, AttachedReport& out) {
  std::string where = repoOf(c) + "@" + out.artifact.digest.str();
  std::map<std::string, std::string> ev = {
      {"artifact", out.artifact.digest.str()}, {"envelope", envDesc.digest.str()}, {"image", manifest.str()}};
  auto problem = [&](const char* code, std::string message) {
    out.problems.push_back({code, Severity::Error, util::printable(message, 600), ev});
  };
  auto bytes = c.smallBlob(envDesc, kMaxReportEnvelopeBytes);
  if (!bytes.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + bytes.error().message);
  if (envDesc.mediaType == kSigstoreBundleMediaType) {
    // A Sigstore bundle is one more wrapper: only its envelope is read, then checked as ours.
    out.layout = kSigstoreBundleMediaType;
    auto inner = bundleEnvelope(*bytes);
    if (!inner.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + inner.error().message);
    *bytes = std::move(*inner);
  }
  auto env = parseEnvelope(*bytes);
  bytes->clear();
  bytes->shrink_to_fit();
  if (!env.ok()) return problem("report.artifact.corrupt", "report " + where + ": " + env.error().message);
  out.statement = oci::Digest{"sha256", util::sha256Hex(env->payload)};
  if (!env->signatures.empty()) out.keyid = util::printable(env->signatures.front().keyid, 100);
  if (env->payloadType != kInTotoPayloadType)
    return problem("report.artifact.corrupt",
                   "report " + where + ": payload type '" + env->payloadType + "' is not in-toto");
  // The signature first: nothing of an unverified payload is parsed when a key is given.
  if (env->signatures.empty()) {
    out.signature = "unsigned";
    if (key) return problem("report.signature.missing", "report " + where + " is not signed");
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
  // One subject, naming this manifest and this repository: a statement for several images is not
  // what `audit --attach` signs, and which of its subjects a verdict was given for is unknowable.
  if (st->subjects.size() != 1)
    return problem("report.subject.multiple", "report " + where + ": its signed statement names " +
                                                  std::to_string(st->subjects.size()) +
                                                  " subjects; a Kernodeck report is about one image");
  const Subject& subject = st->subjects.front();
  if (auto it = subject.digest.find(manifest.algorithm); it == subject.digest.end() || it->second != manifest.encoded)
    return problem("report.subject.mismatch",
                   "report " + where + ": its signed statement is about another image than " + manifest.str());
  out.subjectName = util::printable(subject.name, 300);
  if (!subjectNamesRepository(subject.name, c.reference(), trusted)) {
    ev["signed_for"] = out.subjectName;
    return problem("report.subject.repository",
                   "report " + where + " was signed for " + out.subjectName + ", not for " + repoOf(c) +
                       ": a verdict given under one repository's policy does not decide for another (allow a "
                       "mirror explicitly with --trust-repository)");
  }
  if (st->predicateType == kReportPredicateTypeV1 || st->predicateType == kReportPredicateTypeV2)
    return problem("report.predicate.outdated",
                   "report " + where + " has an earlier Kernodeck's predicate (" +
                       (st->predicateType == kReportPredicateTypeV1
                            ? std::string("v1, which carries no signed time, so it cannot be ordered")
                            : std::string("v2, which carries the whole report, so its size has no bound a gate can "
                                          "hold every report to")) +
                       "); it does not count (audit the image again)");
  if (st->predicateType != kReportPredicateType)
    return problem("report.artifact.corrupt",
                   "report " + where + ": predicate type '" + st->predicateType + "' is not a Kernodeck report");
  auto pred = parsePredicate(st->predicate);
  if (!pred.ok()) return problem("report.predicate.invalid", "report " + where + ": " + pred.error().message);
  out.verdict = pred->verdict;
  out.predicate = std::move(*pred);
}

// One signed statement in several layouts (Kernodeck's referrer and a Sigstore bundle, or
// bundles that differ only in their unsigned parts) is one report: entries whose signatures
// verified over the same payload bytes are merged into the first (the others become its
// re-wraps). Only entries of one signature state are merged: a copy that does not verify never
// stands for one that does (copies that do not verify, or read without a key, count for nothing
// either way and are named once).
void mergeSameStatements(std::vector<AttachedReport>& out) {
  std::map<std::string, size_t> first;
  std::vector<AttachedReport> kept;
  for (auto& r : out) {
    if (!r.signature.empty() && !r.statement.encoded.empty()) {
      auto [it, fresh] = first.emplace(r.signature + " " + r.statement.str(), kept.size());
      if (!fresh) {
        AttachedReport& k = kept[it->second];
        k.rewraps.push_back(r.artifact.digest);
        for (const auto& w : r.rewraps) k.rewraps.push_back(w);
        continue;
      }
    }
    kept.push_back(std::move(r));
  }
  out = std::move(kept);
}

// The one entry that says the listing is past the bounds: it blocks any pass (decide()).
AttachedReport tooMany(registry::Client& c, const oci::Digest& manifest, const std::string& what) {
  AttachedReport r;
  r.blocksAll = true;
  r.problems.push_back({"report.referrers.too_many",
                        Severity::Error,
                        util::printable(what, 600) + " attached to " + manifest.str() + " in " + repoOf(c) +
                            ": more than a gate reads, so no report of this image can pass (an honest image "
                            "re-audited daily for years stays far below; remove the surplus referrers)",
                        {{"image", manifest.str()}}});
  return r;
}

}  // namespace

bool subjectNamesRepository(const std::string& name, const registry::Reference& judged,
                            const std::vector<std::string>& trusted) {
  auto named = registry::parseReference(name);
  if (!named.ok() || named->digest || named->tagGiven) return false;
  if (named->registry == judged.registry && named->repository == judged.repository) return true;
  std::string full = named->registry + "/" + named->repository;
  for (const auto& glob : trusted)
    if (::fnmatch(glob.c_str(), full.c_str(), 0) == 0) return true;
  return false;
}

Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key,
                                                const std::vector<std::string>& trustedRepositories) {
  bool truncated = false, bundlesTruncated = false;
  KDK_TRY_ASSIGN(std::vector<registry::Referrer> refs,
                 registry::listReferrers(c, manifest, kReportArtifactType, &truncated));
  // cosign 3's bundle referrers (sigstore_bundle.h), read as one more wrapper of an envelope.
  // The bounds hold for each layout (an attach writes one referrer of each).
  KDK_TRY_ASSIGN(std::vector<registry::Referrer> bundles,
                 registry::listReferrers(c, manifest, kSigstoreBundleMediaType, &bundlesTruncated));
  truncated = truncated || bundlesTruncated;
  for (auto& b : bundles) refs.push_back(std::move(b));
  std::vector<AttachedReport> out;
  if (truncated) {
    out.push_back(tooMany(c, manifest, "the referrers API lists more pages or bytes of referrers than are read"));
    return out;
  }
  // 1. The listing, each artifact manifest once (a listing may repeat one). Invalid entries cost
  // no fetch; past a few they are counted in one finding.
  std::vector<const registry::Referrer*> listed;
  std::set<std::string> seenManifests;
  std::map<std::string, size_t> perLayout;  // distinct manifests by the listing's artifactType
  size_t invalid = 0;
  for (const auto& r : refs) {
    if (!r.problem.empty()) {
      if (++invalid <= kMaxInvalidReferrersNamed) listed.push_back(&r);
      continue;
    }
    if (seenManifests.insert(r.desc.digest.str()).second) {
      listed.push_back(&r);
      ++perLayout[r.artifactType];
    }
  }
  for (const auto& [type, n] : perLayout)
    if (n > kMaxReportReferrers) {
      out.push_back(tooMany(c, manifest,
                            std::to_string(n) + " report artifacts of type " + type + " are (more than " +
                                std::to_string(kMaxReportReferrers) + ")"));
      return out;
    }
  // 2. Each artifact manifest (small, bounded): which envelope it wraps. Re-wraps of one envelope
  // are one report: grouped by the envelope's digest before any envelope is fetched.
  std::map<std::string, size_t> byEnvelope;  // envelope digest -> index in `out`
  std::vector<oci::Descriptor> envelopes;    // of out[i], when it has one
  std::vector<AttachedReport> problems;
  for (const registry::Referrer* r : listed) {
    ListedArtifact a = readListed(c, *r, manifest);
    if (!a.envelope) {
      AttachedReport bad;
      bad.artifact = r->desc;
      bad.annotations = r->desc.annotations;
      bad.problems = std::move(a.problems);
      problems.push_back(std::move(bad));
      continue;
    }
    auto [it, fresh] = byEnvelope.emplace(a.envelope->digest.str(), out.size());
    if (!fresh) {
      out[it->second].rewraps.push_back(r->desc.digest);
      continue;
    }
    AttachedReport rep;
    rep.artifact = r->desc;
    rep.annotations = r->desc.annotations;
    rep.envelope = a.envelope->digest;
    out.push_back(std::move(rep));
    envelopes.push_back(*a.envelope);
  }
  if (invalid > kMaxInvalidReferrersNamed) {
    AttachedReport rest;
    rest.problems.push_back({"report.referrer.invalid",
                             Severity::Error,
                             std::to_string(invalid - kMaxInvalidReferrersNamed) + " more referrers of " +
                                 manifest.str() + " in " + repoOf(c) + " are not valid descriptors; skipped",
                             {{"image", manifest.str()}, {"count", std::to_string(invalid)}}});
    problems.push_back(std::move(rest));
  }
  size_t inBundles = static_cast<size_t>(std::count_if(
      envelopes.begin(), envelopes.end(), [](const oci::Descriptor& d) { return d.mediaType == kSigstoreBundleMediaType; }));
  if (inBundles > kMaxReportEnvelopes || out.size() - inBundles > kMaxReportEnvelopes) {
    size_t n = std::max(inBundles, out.size() - inBundles);
    out.clear();
    out.push_back(tooMany(
        c, manifest,
        std::to_string(n) + " distinct report envelopes are (more than " + std::to_string(kMaxReportEnvelopes) + ")"));
    for (auto& p : problems) out.push_back(std::move(p));
    return out;
  }
  // 3. Each distinct envelope, once.
  for (size_t i = 0; i < out.size(); ++i) checkEnvelope(c, envelopes[i], manifest, key, trustedRepositories, out[i]);
  mergeSameStatements(out);
  for (auto& p : problems) out.push_back(std::move(p));
  return out;
}

Result<Key> loadVerifyKey(const std::string& path, const std::string& flag) {
  KDK_TRY_ASSIGN(Key k, Key::fromFile(path));
  if (k.isPrivate())
    return Error::Invalid(flag + " " + util::printable(path, 200) +
                          " is a private key: give the public key instead (openssl pkey -in " +
                          util::printable(path, 200) +
                          " -pubout -out ci.pub); a signing key does not belong where reports are only checked");
  return k;
}

Result<nlohmann::json> fetchReport(registry::Client& c, const AttachedReport& r) {
  if (!r.predicate) return Error::Invalid("report " + r.artifact.digest.str() + " has no readable predicate");
  KDK_TRY_ASSIGN(std::string bytes, c.smallBlob(r.predicate->report, kMaxReportBlobBytes));
  auto rep = checkReportBlob(*r.predicate, bytes);
  if (!rep.ok())
    return Error::Corrupt("report " + repoOf(c) + "@" + r.artifact.digest.str() + ": " + rep.error().message);
  return rep;
}

}  // namespace kernodeck::attest
