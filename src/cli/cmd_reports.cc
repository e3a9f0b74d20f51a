// kernodeck reports IMAGE [--key PEM] [--max-age D] [--json] [--fetch FILE]: lists the audit
// reports attached to a registry image, checks each (subject, envelope, statement, signature with
// --key), decides as `probe --require-report` does (attest::decide) and can write the deciding
// report out. Problems are findings of a kernodeck.report/v1 report.
#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/time.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;
using nlohmann::json;

namespace kernodeck::cli {

int runReports(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck reports IMAGE [options]\n\n"
      "IMAGE: a registry reference (REGISTRY/REPO:TAG or @DIGEST)\n\noptions");
  std::string image, keyFile, fetch, output, platform, failOn = "error", maxAge;
  bool asJson = false, help = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "key", po::value(&keyFile), "verify each report's signature with this PEM public (or private) key")(
      "fetch", po::value(&fetch),
      "write the report that decides (the newest pass, else the newest failing one; the audit's JSON report) to FILE "
      "('-': stdout)")("max-age", po::value(&maxAge),
                       "a report signed longer ago does not count (e.g. 30d, 12h, 1w2d; default: any age)")(
      "platform", po::value(&platform), "OS/ARCH[/VARIANT] of a multi-platform image (default: this host's)")(
      "json", po::bool_switch(&asJson), "print the kernodeck.report/v1 JSON report instead of text")(
      "output,o", po::value(&output), "write the listing to FILE instead of stdout")(
      "fail-on", po::value(&failOn), "exit 1 on findings at or above: info, warning, error (default), none");
  rf.add(opts);
  std::vector<std::string> images;
  if (int rc = parseOptions("reports", args, opts, &images); rc >= 0) return rc;
  if (help)
    return printHelp(
        opts,
        "exit codes: 0 ok, 1 findings at or above --fail-on (no report, a bad one), 2 usage, 3 could not complete\n");
  auto usage = [](const std::string& m) { return usageError("reports", m); };
  if (images.size() != 1) return usage("one IMAGE is required (try --help)");
  image = images[0];
  auto threshold = report::parseFailOn(failOn);
  if (!threshold.ok()) return usage(threshold.error().message);
  if (std::string e = rf.finish(); !e.empty()) return usage(e);
  attest::DecisionPolicy policy{util::nowMs(), std::nullopt, "report"};
  if (!maxAge.empty()) {
    policy.maxAgeS = util::parseDurationSeconds(maxAge);
    if (!policy.maxAgeS) return usage("--max-age needs a duration such as 30d, 12h or 1w2d, not '" + maxAge + "'");
  }
  oci::Platform want = oci::hostPlatform();
  if (!platform.empty()) {
    auto p = oci::parsePlatform(platform);
    if (!p.ok()) return usage(p.error().message);
    want = *p;
  }
  std::optional<attest::Key> key;
  if (!keyFile.empty()) {
    auto k = attest::Key::fromFile(keyFile);
    if (!k.ok()) return usage(k.error().message);
    key = std::move(*k);
  }

  report::Report rep("reports");
  rep.declareSteps({"resolve", "referrers"});
  rep.subject()["reference"] = image;
  std::optional<registry::Reference> ref;
  std::unique_ptr<registry::Client> client;
  oci::Descriptor manifest;
  rep.runStep("resolve", [&]() -> Status {
    KDK_TRY_ASSIGN(ref, registry::parseReference(image.rfind("docker://", 0) == 0 ? image.substr(9) : image));
    rep.subject()["registry"] = ref->registry;
    rep.subject()["repository"] = ref->repository;
    client = std::make_unique<registry::Client>(*ref, rf.options);
    KDK_TRY_ASSIGN(manifest,
                   registry::resolveImageManifest(*client, ref->digest ? ref->digest->str() : ref->tag, want));
    rep.subject()["manifest_digest"] = manifest.digest.str();
    return {};
  });
  std::vector<attest::AttachedReport> found;
  rep.runStep("referrers", [&]() -> Status {
    KDK_TRY_ASSIGN(found, attest::readReports(*client, manifest.digest, key ? &*key : nullptr));
    return {};
  });
  json list = json::array();
  for (const auto& r : found) {
    json j = {{"artifact", r.artifact.digest.str()},
              {"verdict", r.verdict},
              {"signature", r.signature},
              {"keyid", r.keyid},
              {"annotations", r.annotations}};
    if (r.predicate)
      j["signed"] = {{"time", r.predicate->time},
                     {"fail_on", r.predicate->failOn},
                     {"kernodeck_version", r.predicate->kernodeckVersion}};
    if (!r.problems.empty()) j["problems"] = r.problems.size();
    list.push_back(j);
  }
  rep.section("reports") = list;
  attest::Decision decision;
  if (!rep.failed()) {
    decision = attest::decide(found, manifest.digest, policy);
    for (const auto& f : decision.findings) rep.add(f);
    rep.section("decision") = {{"outcome", attest::outcomeName(decision.outcome)}, {"met", decision.met()}};
    if (policy.maxAgeS) rep.section("decision")["max_age_seconds"] = *policy.maxAgeS;
  }
  const attest::AttachedReport* best = decision.chosen;
  if (best)
    rep.section("newest") = {{"artifact", best->artifact.digest.str()},
                             {"verdict", best->verdict},
                             {"signature", best->signature},
                             {"signed_at", best->predicate->time}};

  std::string text;
  if (asJson) {
    text = rep.toJson().dump(2) + "\n";
  } else {
    for (const auto& r : found) {
      std::string signedAt = r.predicate ? r.predicate->time : "-";
      text += (r.artifact.digest.encoded.empty() ? std::string("(invalid entry)") : r.artifact.digest.str()) + "  " +
              signedAt + "  " + (r.verdict.empty() ? "-" : r.verdict) + "  " +
              (r.signature.empty() ? "-" : r.signature) + (r.problems.empty() ? "" : "  (problems)") + "\n";
    }
    text += rep.toText();
  }
  if (int rc = emit(text, output)) return rc;
  if (!fetch.empty()) {
    if (!best) {
      std::fprintf(stderr, "kernodeck reports: --fetch: no attached report counts (%s)\n",
                   attest::outcomeName(decision.outcome));
    } else if (int rc = emit(best->report->dump(2) + "\n", fetch)) {
      return rc;
    }
  }
  if (rep.failed()) std::fprintf(stderr, "kernodeck reports: %s\n", rep.firstError().c_str());
  return rep.exitCode(*threshold);
}

}  // namespace kernodeck::cli
