// kernodeck reports IMAGE [--key PEM] [--max-age D] [--max-clock-skew D] [--json] [--fetch FILE]:
// lists the audit reports attached to a registry image, checks each (subject, envelope, statement,
// signature with --key), decides as `probe --require-report` does (attest::decide) and can write
// the deciding report out (fetched by the digest its signed predicate names). Without --key the
// reports are listed as unverified and nothing passes (exit 1). Problems are findings of a
// kernodeck.report/v1 report.
#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/exceptions.h"
#include "kernodeck/util/time.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;
using nlohmann::json;

namespace kernodeck::cli {

namespace {

// The options of `kernodeck reports`, as given.
struct ReportsFlags {
  std::string keyFile, fetch, output, platform, failOn = "error", maxAge, maxClockSkew;
  bool asJson = false, help = false;
  std::vector<std::string> trustRepositories;
  RegistryFlags rf;
};

// Declares every option of `kernodeck reports` into `opts`, filling `f`.
void addReportsOptions(po::options_description& opts, ReportsFlags& f) {
  opts.add_options()("help,h", po::bool_switch(&f.help), "show this help")(
      "key", po::value(&f.keyFile),
      "verify each report's signature with this PEM public key (the CI's; a private key is refused)")(
      "fetch", po::value(&f.fetch),
      "write the report that decides (the newest pass, else the newest failing one; the audit's JSON report) to FILE "
      "('-': stdout)")("max-age", po::value(&f.maxAge),
                       "a report signed longer ago does not count (e.g. 30d, 12h, 1w2d; default: any age)")(
      "max-clock-skew", po::value(&f.maxClockSkew),
      "a report signed for a time more than this ahead of this host's clock does not count (default: 5m)")(
      "platform", po::value(&f.platform), "OS/ARCH[/VARIANT] of a multi-platform image (default: this host's)")(
      "trust-repository", po::value(&f.trustRepositories)->composing(),
      "also count reports signed for a repository matching this glob (REGISTRY/REPO, '*' matches '/'; a mirror's "
      "source; repeatable; default: only the image's own repository)")(
      "json", po::bool_switch(&f.asJson), "print the kernodeck.report/v1 JSON report instead of text")(
      "output,o", po::value(&f.output), "write the listing to FILE instead of stdout")(
      "fail-on", po::value(&f.failOn), "exit 1 on findings at or above: info, warning, error (default), none");
  f.rf.add(opts, false, /*defaultTimeoutS=*/120);
}

// The flags checked and read: the decision's policy (--max-age), the platform and the key.
struct ReportsRequest {
  attest::DecisionPolicy policy{util::nowMs(), std::nullopt, "report"};
  oci::Platform want = oci::hostPlatform();
  std::optional<attest::Key> key;
};

// Reads --max-age, --platform and --key into `q`; "" or the usage error's message.
std::string readRequest(const ReportsFlags& f, ReportsRequest& q) {
  if (!f.maxAge.empty()) {
    q.policy.maxAgeS = util::parseDurationSeconds(f.maxAge);
    if (!q.policy.maxAgeS) return "--max-age needs a duration such as 30d, 12h or 1w2d, not '" + f.maxAge + "'";
  }
  if (!f.maxClockSkew.empty()) {
    auto s = util::parseDurationSeconds(f.maxClockSkew);
    if (!s) return "--max-clock-skew needs a duration such as 5m or 90s, not '" + f.maxClockSkew + "'";
    q.policy.maxClockSkewS = *s;
  }
  if (!f.platform.empty()) {
    auto p = oci::parsePlatform(f.platform);
    if (!p.ok()) return p.error().message;
    q.want = *p;
  }
  if (!f.keyFile.empty()) {
    auto k = attest::loadVerifyKey(f.keyFile, "--key");
    if (!k.ok()) return k.error().message;
    q.key = std::move(*k);
  }
  q.policy.keyGiven = q.key.has_value();
  return "";
}

// What the registry holds for the image: the report (steps resolve and referrers, the listing,
// the decision), the attached reports it judged and the decision (pointers into `found`).
struct Listing {
  report::Report rep{"reports"};
  std::unique_ptr<registry::Client> client;
  std::vector<attest::AttachedReport> found;
  attest::Decision decision;
};

// Resolves `image` (for an index, `q.want`), reads its attached reports and decides.
void listReports(const std::string& image, const ReportsFlags& f, const ReportsRequest& q, Listing& l) {
  report::Report& rep = l.rep;
  std::vector<attest::AttachedReport>& found = l.found;
  const attest::DecisionPolicy& policy = q.policy;
  const oci::Platform& want = q.want;
  const std::optional<attest::Key>& key = q.key;
  rep.declareSteps({"resolve", "referrers"});
  rep.subject()["reference"] = image;
  std::optional<registry::Reference> ref;
  std::unique_ptr<registry::Client>& client = l.client;
  oci::Descriptor manifest;
  rep.runStep("resolve", [&]() -> Status {
    KDK_TRY_ASSIGN(oci::ResolvedRef named, oci::resolveImageRef(image, oci::RefUse::RegistryOnly));
    KDK_TRY_ASSIGN(ref, registry::parseReference(named.ref.registryName()));
    rep.subject()["registry"] = ref->registry;
    rep.subject()["repository"] = ref->repository;
    client = std::make_unique<registry::Client>(*ref, f.rf.options);
    KDK_TRY_ASSIGN(manifest,
                   registry::resolveImageManifest(*client, ref->digest ? ref->digest->str() : ref->tag, want));
    rep.subject()["manifest_digest"] = manifest.digest.str();
    return {};
  });
  rep.runStep("referrers", [&]() -> Status {
    KDK_TRY_ASSIGN(found, attest::readReports(*client, manifest.digest, key ? &*key : nullptr, f.trustRepositories));
    return {};
  });
  json list = json::array();
  for (const auto& r : found) {
    json j = {{"artifact", r.artifact.digest.str()},
              {"verdict", r.verdict},
              {"signature", r.signature},
              {"keyid", r.keyid},
              {"annotations", r.annotations}};
    if (!r.envelope.encoded.empty()) j["envelope"] = r.envelope.str();
    if (!r.layout.empty()) j["layout"] = "sigstore-bundle";  // `envelope` is then the bundle's digest
    if (!r.subjectName.empty()) j["signed_for"] = r.subjectName;
    if (!r.rewraps.empty()) {
      j["rewraps"] = json::array();
      for (const auto& w : r.rewraps) j["rewraps"].push_back(w.str());
    }
    if (r.signature != "verified") j["verified"] = false;
    if (r.predicate)
      j["signed"] = {{"time", r.predicate->time},
                     {"fail_on", r.predicate->failOn},
                     {"kernodeck_version", r.predicate->kernodeckVersion}};
    if (r.predicate)  // what --exceptions waived, as signed
      if (json e = r.predicate->exceptions; !e.is_null()) j["signed"]["exceptions"] = e;
    if (!r.problems.empty()) j["problems"] = r.problems.size();
    list.push_back(j);
  }
  rep.section("reports") = list;
  if (!rep.failed()) {
    l.decision = attest::decide(found, manifest.digest, policy);
    for (const auto& x : l.decision.findings) rep.add(x);
    rep.section("decision") = {{"outcome", attest::outcomeName(l.decision.outcome)}, {"met", l.decision.met()}};
    if (policy.maxAgeS) rep.section("decision")["max_age_seconds"] = *policy.maxAgeS;
  }
  if (const attest::AttachedReport* best = l.decision.chosen)
    rep.section("newest") = {{"artifact", best->artifact.digest.str()},
                             {"verdict", best->verdict},
                             {"signature", best->signature},
                             {"signed_at", best->predicate->time}};
}

// The listing as text: a line per attached report, then the report's text.
std::string listingText(const Listing& l) {
  std::string text;
  for (const auto& r : l.found) {
    std::string signedAt = r.predicate ? r.predicate->time : "-";
    // What an unverified envelope claims is shown as a claim, never as a verdict.
    std::string verdict = r.verdict.empty() ? "-" : r.signature == "verified" ? r.verdict : "claims " + r.verdict;
    text += (r.artifact.digest.encoded.empty() ? std::string(r.blocksAll ? "(listing)" : "(invalid entry)")
                                               : r.artifact.digest.str()) +
            "  " + signedAt + "  " + verdict + "  " + (r.signature.empty() ? "-" : r.signature) +
            (r.signature == "verified" || r.signature.empty() ? "" : " (unverified)") +
            (r.rewraps.empty() ? "" : "  (+" + std::to_string(r.rewraps.size()) + " re-wraps)") +
            (r.problems.empty() ? "" : "  (problems)") + "\n";
    if (r.predicate) text += report::exceptionsSummaryText(r.predicate->exceptions);
  }
  text += l.rep.toText();
  return text;
}

}  // namespace

int runReports(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck reports IMAGE [options]\n\n"
      "IMAGE: a registry reference (REGISTRY/REPO:TAG or @DIGEST)\n\noptions");
  ReportsFlags f;
  addReportsOptions(opts, f);
  std::vector<std::string> images;
  if (int rc = parseOptions("reports", args, opts, &images); rc >= 0) return rc;
  if (f.help)
    return printHelp(
        opts,
        "exit codes: 0 ok, 1 findings at or above --fail-on (no report, a bad one), 2 usage, 3 could not complete\n");
  auto usage = [](const std::string& m) { return usageError("reports", m); };
  if (images.size() != 1) return usage("one IMAGE is required (try --help)");
  std::string image = images[0];
  auto threshold = report::parseFailOn(f.failOn);
  if (!threshold.ok()) return usage(threshold.error().message);
  if (std::string e = f.rf.finish(); !e.empty()) return usage(e);
  ReportsRequest q;
  if (std::string e = readRequest(f, q); !e.empty()) return usage(e);

  Listing l;
  listReports(image, f, q, l);
  const report::Report& rep = l.rep;
  const attest::AttachedReport* best = l.decision.chosen;
  std::string text = f.asJson ? rep.toJson().dump(2) + "\n" : listingText(l);
  if (int rc = emit(text, f.output)) return rc;
  if (!f.fetch.empty()) {
    if (!best) {
      std::fprintf(stderr, "kernodeck reports: --fetch: no attached report counts (%s)\n",
                   attest::outcomeName(l.decision.outcome));
    } else {
      // Fetched by the digest the signed predicate names, and checked against its verdict.
      auto body = attest::fetchReport(*l.client, *best);
      if (!body.ok()) {
        std::fprintf(stderr, "kernodeck reports: --fetch: %s\n", body.error().message.c_str());
        return 3;
      }
      if (int rc = emit(body->dump(2) + "\n", f.fetch)) return rc;
    }
  }
  if (rep.failed()) std::fprintf(stderr, "kernodeck reports: %s\n", rep.firstError().c_str());
  return rep.exitCode(*threshold);
}

}  // namespace kernodeck::cli
