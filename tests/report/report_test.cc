#include "kernodeck/report/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "kernodeck/report/report_doc.h"

namespace report_report_test {

using namespace kernodeck;
using namespace kernodeck::report;

TEST(Report, FirstFailureLeavesLaterStepsNotReached) {
  Report r("audit");
  r.declareSteps({"a", "b", "c"});
  EXPECT_TRUE(r.runStep("a", [] { return Status(); }));
  EXPECT_FALSE(r.runStep("b", [] { return Status(Error::Io("disk on fire")); }));
  bool ran = false;
  EXPECT_FALSE(r.runStep("c", [&] {
    ran = true;
    return Status();
  }));
  EXPECT_FALSE(ran);
  auto j = r.toJson();
  EXPECT_EQ(j["schema"], "kernodeck.report/v1");
  EXPECT_EQ(j["steps"][0]["status"], "passed");
  EXPECT_EQ(j["steps"][1]["status"], "failed");
  EXPECT_EQ(j["steps"][1]["error"], "disk on fire");
  EXPECT_EQ(j["steps"][2]["status"], "not_reached");
  EXPECT_EQ(j["first_error"], "disk on fire");
  EXPECT_EQ(r.exitCode(2), kExitIncomplete);
}

TEST(Report, SkippedStepStaysSkipped) {
  Report r("audit");
  r.declareSteps({"os"});
  r.runStep("os", [&] {
    r.skipStep("os", "no os-release");
    return Status();
  });
  EXPECT_EQ(r.toJson()["steps"][0]["status"], "skipped");
  EXPECT_EQ(r.exitCode(2), kExitOk);
}

TEST(Report, ExitCodeFollowsFailOn) {
  Report r("audit");
  r.add("x.warn", Severity::Warning, "w");
  EXPECT_EQ(r.exitCode(2), kExitOk);
  EXPECT_EQ(r.exitCode(1), kExitFindings);
  EXPECT_EQ(r.exitCode(0), kExitFindings);
  EXPECT_EQ(r.exitCode(-1), kExitOk);
  EXPECT_FALSE(parseFailOn("fatal").ok());
  EXPECT_EQ(*parseFailOn("warning"), 1);
}

TEST(Report, FindingsAreRedactedAndCarryEvidence) {
  Report r("audit");
  r.add("secret.leak", Severity::Error, "found https://bob:hunter2@example.com/x", {{"path", "etc/pip.conf"}});
  auto j = r.toJson();
  EXPECT_EQ(j["findings"][0]["message"], "found https://***@example.com/x");
  EXPECT_EQ(j["findings"][0]["path"], "etc/pip.conf");
  EXPECT_EQ(j["summary"]["findings"]["error"], 1);
  EXPECT_EQ(r.toText().find("hunter2"), std::string::npos);
  EXPECT_NE(r.toText().find("secret.leak"), std::string::npos);
}

// Report::toJson writes what parseReportDoc reads: every step, finding (with its evidence),
// subject field and section the readers use comes back equal, and the summary's verdict is the
// report's own under each --fail-on.
TEST(ReportDoc, WhatTheReportWritesReadsBackEqual) {
  for (bool fail : {false, true}) {
    Report r("audit");
    r.declareSteps({"resolve", "layers", "python"});
    r.runStep("resolve", [] { return Status(); });
    r.runStep("layers", [&] { return fail ? Status(Error::Io("layer 2 is truncated")) : Status(); });
    r.skipStep("python", "no interpreter");
    r.subject() = {{"reference", "registry.example/team/app:1"},
                   {"manifest_digest", "sha256:" + std::string(64, 'c')},
                   {"registry", "registry.example"},
                   {"repository", "team/app"}};
    r.add("os.package.modified", Severity::Error, "libc6 changed", {{"package", "libc6"}, {"path", "lib/libc.so.6"}});
    r.add("python.record.mismatch", Severity::Warning, "torch RECORD", {{"layer", "sha256:ab"}, {"name", "torch"}});
    r.add("image.info", Severity::Info, "a fact");
    r.section("python") = {
        {"environments",
         {{{"prefix", "/opt/venv"}, {"freeze", {"torch==2.3.0"}}, {"interpreter", "/opt/venv/bin/python"}}}}};
    r.section("os_packages") = {{"packages", {{{"name", "libc6"}, {"version", "2.36-9"}, {"architecture", "amd64"}}}}};
    for (int failOn : {-1, 0, 1, 2}) {
      auto d = parseReportDoc(r.toJson(failOn));
      ASSERT_TRUE(d.ok()) << d.error().message;
      EXPECT_EQ(d->schema, Report::kSchema);
      EXPECT_EQ(d->command, "audit");
      EXPECT_EQ(d->subjectReference, "registry.example/team/app:1");
      EXPECT_EQ(d->manifestDigest, "sha256:" + std::string(64, 'c'));
      EXPECT_EQ(d->subjectRegistry, "registry.example");
      EXPECT_EQ(d->subjectRepository, "team/app");
      EXPECT_FALSE(d->created.empty());
      EXPECT_EQ(d->firstError, r.firstError());
      EXPECT_EQ(d->failed(), r.failed());
      ASSERT_EQ(d->steps.size(), r.steps().size());
      for (size_t i = 0; i < r.steps().size(); ++i) {
        EXPECT_EQ(d->steps[i].name, r.steps()[i].name);
        EXPECT_EQ(d->steps[i].status, toString(r.steps()[i].status));
        EXPECT_EQ(d->steps[i].error, r.steps()[i].error);
      }
      ASSERT_EQ(d->findings.size(), r.findings().size());
      for (size_t i = 0; i < r.findings().size(); ++i) {
        const Finding& f = r.findings()[i];
        EXPECT_EQ(d->findings[i].code, f.code);
        EXPECT_EQ(d->findings[i].severity, toString(f.severity));
        EXPECT_EQ(d->findings[i].message, f.message);
        EXPECT_EQ(d->findings[i].evidence, f.evidence);
        auto ev = [&](const char* k) { return f.evidence.contains(k) ? f.evidence.at(k) : ""; };
        EXPECT_EQ(d->findings[i].package, ev("package"));
        EXPECT_EQ(d->findings[i].layer, ev("layer"));
        EXPECT_EQ(d->findings[i].name, ev("name"));
        EXPECT_EQ(d->findings[i].path, ev("path"));
      }
      EXPECT_EQ(d->summary.complete, !r.failed());
      EXPECT_EQ(std::tie(d->summary.info, d->summary.warning, d->summary.error), std::make_tuple(1, 1, 1));
      EXPECT_EQ(verdictOf(d->summary, failOn), r.verdict(failOn)) << failOn;
      ASSERT_TRUE(d->hasPython && d->hasOsPackages);
      ASSERT_EQ(d->environments.size(), 1u);
      EXPECT_EQ(d->environments[0].prefix, "/opt/venv");
      EXPECT_EQ(d->environments[0].freeze, std::vector<std::string>{"torch==2.3.0"});
      EXPECT_EQ(d->environments[0].interpreter, "/opt/venv/bin/python");
      ASSERT_EQ(d->osPackages.size(), 1u);
      EXPECT_EQ(d->osPackages[0].name + " " + d->osPackages[0].version + " " + d->osPackages[0].architecture,
                "libc6 2.36-9 amd64");
      EXPECT_EQ(d->python, r.sections()["python"]);
    }
  }
}

// A report someone else wrote: a wrong type is an error naming the field; a damaged summary
// reads as incomplete, never as a pass.
TEST(ReportDoc, WrongShapesAreErrorsAndADamagedSummaryIsNoPass) {
  nlohmann::json good = Report("audit").toJson();
  ASSERT_TRUE(parseReportDoc(good).ok());
  struct Case {
    nlohmann::json::json_pointer where;
    nlohmann::json value;
    const char* message;
  } cases[] = {
      {nlohmann::json::json_pointer("/schema"), "kernodeck.report/v2", "schema is 'kernodeck.report/v2'"},
      {nlohmann::json::json_pointer("/tool/command"), 7, "tool.command is a number, expected a string"},
      {nlohmann::json::json_pointer("/steps"), "x", "steps is a string, expected an array"},
      {nlohmann::json::json_pointer("/findings"),
       {{{"code", "a"}, {"severity", "info"}, {"message", 1}}},
       "findings[0].message is a number, expected a string"},
      {nlohmann::json::json_pointer("/findings"),
       {{{"code", "a"}, {"severity", "info"}, {"message", "m"}, {"path", 2}}},
       "findings[0].path is a number, expected a string"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = good;
    j[c.where] = c.value;
    auto d = parseReportDoc(j);
    ASSERT_FALSE(d.ok()) << c.message;
    EXPECT_NE(d.error().message.find(c.message), std::string::npos) << d.error().message;
  }
  EXPECT_FALSE(parseReportDoc(nlohmann::json::array()).ok());
  EXPECT_FALSE(parseReportDoc(nlohmann::json::object()).ok());  // neither a report nor an inventory
  for (nlohmann::json summary : {nlohmann::json(nullptr), nlohmann::json({{"complete", "yes"}}),
                                 nlohmann::json({{"findings", {{"error", 0}}}})}) {
    nlohmann::json j = good;
    j["summary"] = summary;
    EXPECT_EQ(verdictOf(summaryOf(j), 2), "incomplete") << summary.dump();
  }
  nlohmann::json j = good;
  j["summary"]["findings"]["error"] = "3";  // not a count: 0, but the report stays complete
  EXPECT_EQ(verdictOf(summaryOf(j), 2), "pass");
}

// Each kernodeck document (report, host record, expectation) is parsed from JSON text by its
// own reader only. Every raw nlohmann parse left in src/ is listed here with the reason it is
// not one of those documents (or is its reader); a new one fails until it is a reader's or is
// listed. Bounded parses of untrusted text go through util::parseUntrustedJson/parseJsonText.
TEST(Documents, NoRawJsonParseOutsideTheReaders) {
  const std::map<std::string, const char*> allowed = {
      {"src/util/json_read.cc", "the bounded parsers themselves (parseUntrustedJson, parseJsonText)"},
      {"src/oci/manifest.cc", "OCI manifests, indexes and configs: the oci module's reader, size and nesting bounded"},
      {"src/oci/layout_source.cc", "an OCI layout's index.json, nesting bounded by its caller"},
      {"src/oci/skopeo_dir_source.cc", "skopeo dir: manifest.json's media type, nesting checked first"},
      {"src/oci/runtime_spec.cc", "the runtime's state and a bundle's config.json: the OCI runtime spec's reader"},
      {"src/audit/image_audit.cc", "the image-spec schema check of a manifest or config, nesting checked first"},
      {"src/python/metadata.cc", "direct_url.json of a distribution (PEP 610)"},
      {"src/probe/resume_torch.cc", "the output file of the resume check's own Python helper"},
      {"src/record/tensor_file.cc", "a .safetensors header, with a callback bounding its values"},
      {"src/registry/scan_store.cc", "an in-toto statement of a shared layer scan, after its signature verified"},
      {"src/hook/hook_config_cli.cc", "a hooks.d entry being edited, parsed as ordered_json to keep its key order"},
  };
  std::regex raw(R"(json::parse\s*\()");
  std::set<std::string> seen;
  std::vector<std::string> offenders;
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(SOURCE_DIR) + "/src")) {
    if (!e.is_regular_file()) continue;
    std::string rel = std::filesystem::relative(e.path(), SOURCE_DIR).string();
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (!std::regex_search(line, raw) || line.find("parse_event_t") != std::string::npos) continue;
      if (allowed.contains(rel))
        seen.insert(rel);
      else
        offenders.push_back(rel + ":" + std::to_string(n) + ": " + line);
    }
  }
  EXPECT_GT(files, 50u);
  for (const auto& o : offenders) ADD_FAILURE() << "parses JSON outside a document's reader: " << o;
  for (const auto& [file, why] : allowed)
    EXPECT_TRUE(seen.contains(file)) << file << " no longer parses JSON itself: remove it from the list (" << why
                                     << ")";
  EXPECT_TRUE(std::regex_search(std::string("  json rec = json::parse(*text, nullptr, false);"), raw));
  EXPECT_TRUE(std::regex_search(std::string("doc = nlohmann::ordered_json::parse (t);"), raw));
  EXPECT_FALSE(std::regex_search(std::string("util::parseUntrustedJson(text)"), raw));
}

}  // namespace report_report_test
