// kernodeck reports IMAGE [--key PEM] [--json] [--fetch FILE]: lists the audit reports attached
// to a registry image, checks each (subject, envelope, statement, signature with --key) and
// can write the newest good one out. Problems are findings of a kernodeck.report/v1 report.
#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/attest/attached_report.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/referrers.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;
using nlohmann::json;

namespace kernodeck::cli {

int runReports(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck reports IMAGE [options]\n\n"
      "IMAGE: a registry reference (REGISTRY/REPO:TAG or @DIGEST)\n\noptions");
  std::string image, keyFile, fetch, output, platform, failOn = "error";
  bool asJson = false, help = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "key", po::value(&keyFile), "verify each report's signature with this PEM public (or private) key")(
      "fetch", po::value(&fetch),
      "write the newest report without problems (the audit's JSON report) to FILE ('-': stdout)")(
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
    if (!r.problems.empty()) j["problems"] = r.problems.size();
    list.push_back(j);
    for (const auto& p : r.problems) rep.add(p);
  }
  rep.section("reports") = list;
  const attest::AttachedReport* best = attest::newestGood(found);
  if (!rep.failed() && found.empty())
    rep.add("report.missing", report::Severity::Error, "no Kernodeck report is attached to " + manifest.digest.str(),
            {{"digest", manifest.digest.str()}});
  else if (!rep.failed() && !best)
    rep.add("report.missing", report::Severity::Error,
            "no attached report of " + manifest.digest.str() + " passes its checks",
            {{"digest", manifest.digest.str()}});
  if (best)
    rep.section("newest") = {
        {"artifact", best->artifact.digest.str()}, {"verdict", best->verdict}, {"signature", best->signature}};

  std::string text;
  if (asJson) {
    text = rep.toJson().dump(2) + "\n";
  } else {
    for (const auto& r : found) {
      auto created = r.annotations.count("org.opencontainers.image.created")
                         ? r.annotations.at("org.opencontainers.image.created")
                         : "-";
      text += r.artifact.digest.str() + "  " + created + "  " + (r.verdict.empty() ? "-" : r.verdict) + "  " +
              (r.signature.empty() ? "-" : r.signature) + (r.problems.empty() ? "" : "  (problems)") + "\n";
    }
    text += rep.toText();
  }
  if (int rc = emit(text, output)) return rc;
  if (!fetch.empty()) {
    if (!best) {
      std::fprintf(stderr, "kernodeck reports: --fetch: no attached report passes its checks\n");
    } else if (int rc = emit(best->report->dump(2) + "\n", fetch)) {
      return rc;
    }
  }
  if (rep.failed()) std::fprintf(stderr, "kernodeck reports: %s\n", rep.firstError().c_str());
  return rep.exitCode(*threshold);
}

}  // namespace kernodeck::cli
