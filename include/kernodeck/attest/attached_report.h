// Audit reports attached to the images they audited: the verdict, counts, policy, signing time
// and the digest of the kernodeck.report/v1 report (predicate.h) become the predicate of an
// in-toto Statement whose subject is the audited manifest, wrapped in a DSSE envelope (signed
// when a key is given), pushed as an OCI artifact (artifactType
// application/vnd.kernodeck.report.v1+json; layers: the envelope, then the report) whose
// `subject` is that manifest.
// Reading them back checks each artifact: its subject, its envelope, its statement's subject
// and, with a key, its signature; every problem is a finding, not an error. Which report
// decides is decision.h's.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/attest/predicate.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/report/report.h"

namespace kernodeck::attest {

inline constexpr const char* kReportArtifactType = "application/vnd.kernodeck.report.v1+json";

// Where an attach put the report: the OCI 1.1 referrer, the layer of the cosign attestation
// image under the tag `sha256-<hex>.att` (see cosign_layout.h) and, when signed, the Sigstore
// bundle referrer cosign 3 writes (sigstore_bundle.h).
struct Attached {
  oci::Descriptor referrer;
  std::string cosignTag;
  oci::Digest cosignManifest;
  // The Sigstore bundle referrer (sigstore_bundle.h), written only for a signed report.
  std::optional<oci::Descriptor> bundle;
};

// Attaches a report of a registry image (its subject names registry, repository and
// manifest_digest) to that manifest, as a referrer and in cosign's attestation layout; signs it
// with `key` when given. The statement's predicate (predicate.h) carries the verdict under
// `failOn` (the audit's --fail-on; -1: none) and the time of signing, now.
Result<Attached> attachReport(const nlohmann::json& report, const registry::ClientOptions& opts, const Key* key,
                              int failOn = static_cast<int>(report::Severity::Error));

struct AttachedReport {
  oci::Descriptor artifact;          // the first listed manifest wrapping the envelope; digest empty for an
                                     // index entry that is not a valid descriptor or a listing-wide problem
  std::vector<oci::Digest> rewraps;  // other listed manifests wrapping the same envelope
  oci::Digest envelope;              // the DSSE envelope's digest, when one was found
  std::map<std::string, std::string> annotations;  // the listing's (unsigned, shown only)
  std::optional<nlohmann::json> report;            // the full audit report, only when fetchReport filled it
  std::optional<ReportPredicate> predicate;
  std::string verdict;      // the predicate's verdict; empty when unreadable
  std::string signature;    // "verified", "invalid", "unsigned", "unchecked" (no key given)
  std::string keyid;        // of the first signature
  std::string subjectName;  // the signed statement's subject name (REGISTRY/REPOSITORY), once verified
  // A problem of the whole listing (report.referrers.too_many): no report of the image can pass.
  bool blocksAll = false;
  std::vector<report::Finding> problems;
  // The layout: empty for Kernodeck's referrer, the bundle media type for a Sigstore bundle
  // referrer (then `envelope` is the bundle's digest).
  std::string layout;
  oci::Digest statement;  // the SHA-256 of the envelope's payload, once the envelope was read
};

// The bounds of what readReports reads, chosen so that an honest image never reaches them (one
// report a day for years: 365 a year) while what a registry writer can make it fetch stays small:
// past a bound nothing passes (report.referrers.too_many, an error that blocks), never "the
// newest N" by anything unsigned.
constexpr size_t kMaxReportReferrers = 2048;               // distinct artifact manifests listed, per layout
constexpr size_t kMaxReportEnvelopes = 1024;               // distinct envelopes among them, per layout
constexpr uint64_t kMaxReportManifestBytes = 64u << 10;    // one artifact manifest
constexpr uint64_t kMaxReportEnvelopeBytes = 256u << 10;   // one envelope (v3: ~2 KiB)
constexpr size_t kMaxInvalidReferrersNamed = 16;           // invalid entries named one by one

// The reports attached to `manifest` in the client's repository, each checked (the signature only
// with `key`): every artifact manifest listed is fetched (bounded), re-wraps of one envelope are
// grouped by the envelope's digest, and each distinct envelope is fetched once (bounded) and
// verified before its payload is parsed. Every listed document is untrusted: one that is
// malformed or does not verify is kept with its problems (report.referrer.invalid,
// report.artifact.corrupt, ...) for the caller to name and skip. Past a bound the result is the
// single blocking entry report.referrers.too_many (first), plus the problems seen. An error only
// when the referrers cannot be listed at all.
// A report is about this image only when its signed statement has exactly one subject, naming
// both `manifest` and the repository judged: the client's own (registry and repository compared
// as registry::parseReference reads them), or one matching a glob of `trustedRepositories`
// (--trust-repository, fnmatch(3): a mirror's verdicts allowed explicitly). A verdict given under
// one repository's policy (its exceptions, its waivers) never decides for another by default.
Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key,
                                                const std::vector<std::string>& trustedRepositories = {});

// Whether the signed subject name `name` ("REGISTRY/REPOSITORY") is the repository `judged`
// names, or matches one of `trusted` (fnmatch(3) globs over "REGISTRY/REPOSITORY", '*' crossing
// '/'). False for a name that is not a valid reference.
bool subjectNamesRepository(const std::string& name, const registry::Reference& judged,
                            const std::vector<std::string>& trusted);

// The CI's public key that readers verify reports with (--key of gate, reports, probe, fleet
// summary), read from `path`. A private key is refused (Invalid, one line naming `flag` and how to
// derive the public key): a signing key copied to where reports are only read (a gate's
// ConfigMap) is a leak, and its holder could sign any verdict.
Result<Key> loadVerifyKey(const std::string& path, const std::string& flag);

// The full audit report of `r`, fetched by the digest its predicate names (bounded by the
// predicate's size and kMaxReportBlobBytes) and checked against the predicate's verdict. Meant
// for verified reports: the digest is only as trustworthy as the signature over it.
Result<nlohmann::json> fetchReport(registry::Client& c, const AttachedReport& r);

}  // namespace kernodeck::attest
