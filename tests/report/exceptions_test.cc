// kernodeck.exceptions/v1: the reader's strictness, each matching rule, what applying entries
// does to a report (verdict, summary, exception findings) and how each format shows suppressed
// findings. The demo image audited with a file, the signed predicate and the pinned SARIF
// checker are in tests/integration/exceptions_test.cc.
#include "kernodeck/report/exceptions.h"

#include <gtest/gtest.h>

#include "kernodeck/audit/exceptions_file.h"
#include "kernodeck/record/record.h"
#include "kernodeck/report/formats.h"
#include "kernodeck/report/report_doc.h"

namespace report_exceptions_test {

using namespace kernodeck;
using namespace kernodeck::report;
using nlohmann::json;

namespace {

constexpr const char* kToday = "2026-12-03";

Result<ExceptionsFile> readYaml(const std::string& text) {
  return audit::parseExceptionsText(text, "waivers.yaml", kToday);
}

std::string entryYaml(const std::string& fields) {
  return "schema: kernodeck.exceptions/v1\nexceptions:\n  - " + fields + "\n";
}

// The demo image's pin mismatch, an OS finding, a digest mismatch.
Report sample() {
  Report r("audit");
  r.subject()["reference"] = "registry.example.com/team/model:1.4";
  r.subject()["registry"] = "registry.example.com";
  r.subject()["repository"] = "team/model";
  r.declareSteps({"resolve"});
  r.runStep("resolve", [] { return Status(); });
  r.add("python.pin.mismatch", Severity::Error, "model-server is pinned as ==0.2.0 but 0.3.0 is installed",
        {{"path", "/app/requirements.txt:3"}, {"package", "model_server"}, {"installed", "0.3.0"}});
  r.add("os.package.modified", Severity::Warning, "/etc/foo.conf of base-files is modified",
        {{"path", "/etc/foo.conf"}, {"package", "base-files"}});
  return r;
}

ExceptionEntry entry(std::string code) {
  ExceptionEntry e;
  e.code = std::move(code);
  e.reason = "0.3.0 is the tested build";
  e.expires = "2027-03-01";
  return e;
}

ExceptionsFile fileOf(std::vector<ExceptionEntry> entries) {
  return ExceptionsFile{"waivers.yaml", std::string(64, 'a'), std::move(entries)};
}

}  // namespace

TEST(ExceptionsRead, YamlAndJsonReadAlike) {
  auto y = readYaml(entryYaml(
      "code: python.pin.mismatch\n    package: model-server\n    path: \"app/requirements.txt*\"\n"
      "    image: \"registry.example.com/team/*\"\n    reason: \"0.3.0 is the tested build\"\n    expires: 2027-03-01"));
  ASSERT_TRUE(y.ok()) << y.error().message;
  ASSERT_EQ(y->entries.size(), 1u);
  EXPECT_EQ(y->entries[0].code, "python.pin.mismatch");
  EXPECT_EQ(y->entries[0].package, "model-server");
  EXPECT_EQ(y->entries[0].image, "registry.example.com/team/*");
  EXPECT_EQ(y->entries[0].expires, "2027-03-01");
  EXPECT_EQ(y->sha256.size(), 64u);
  // The writer's JSON reads back to the same entries.
  auto j = audit::parseExceptionsText(exceptionsJson(*y).dump(), "w.json", kToday);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(exceptionsJson(*j), exceptionsJson(*y));
}

TEST(ExceptionsRead, StrictErrorsNameFileAndEntry) {
  struct Case {
    std::string text, error;
  } cases[] = {
      {entryYaml("code: a.b\n    reason: r\n    expires: 2027-01-01\n    severity: info"),
       "waivers.yaml: exceptions[0] (a.b): unknown field 'severity'"},
      {entryYaml("code: a.b\n    expires: 2027-01-01"), "waivers.yaml: exceptions[0] (a.b): 'reason' is required"},
      {entryYaml("code: a.b\n    reason: r"), "waivers.yaml: exceptions[0] (a.b): 'expires' is required"},
      {entryYaml("reason: r\n    expires: 2027-01-01"), "waivers.yaml: exceptions[0]: 'code' is required"},
      {entryYaml("code: a.b\n    reason: \"  \"\n    expires: 2027-01-01"), "exceptions[0] (a.b): 'reason' is empty"},
      {entryYaml("code: a.b\n    reason: r\n    expires: 2027-02-30"),
       "exceptions[0] (a.b): expires '2027-02-30' is not a date YYYY-MM-DD"},
      {entryYaml("code: a.b\n    reason: r\n    expires: 1 March 2027"), "is not a date YYYY-MM-DD"},
      {entryYaml("code: a.b\n    reason: r\n    expires: 20270301"), "'expires' is not a string (write the date"},
      {entryYaml("code: a.b\n    reason: r\n    expires: 2027-12-04"),
       "exceptions[0] (a.b): expires 2027-12-04 is more than a year ahead (at most 2027-12-03)"},
      {"schema: kernodeck.exceptions/v2\nexceptions: []\n", "waivers.yaml: schema is 'kernodeck.exceptions/v2'"},
      {"schema: kernodeck.exceptions/v1\nexceptions: []\nextra: 1\n", "waivers.yaml: unknown field 'extra'"},
      {"schema: kernodeck.exceptions/v1\nexceptions: {}\n", "waivers.yaml: "},
      {"- a\n- b\n", "waivers.yaml: not a kernodeck.exceptions/v1 document"},
      {"a: &x 1\nb: *x\n", "waivers.yaml: not YAML or JSON"},
  };
  for (const auto& c : cases) {
    auto r = readYaml(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().kind, ErrorKind::Invalid);
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
  }
  // A year ahead exactly is accepted, and so is a date already past (it becomes exception.expired).
  EXPECT_TRUE(readYaml(entryYaml("code: a.b\n    reason: r\n    expires: 2027-12-03")).ok());
  EXPECT_TRUE(readYaml(entryYaml("code: a.b\n    reason: r\n    expires: 2020-01-01")).ok());
}

TEST(ExceptionsMatch, EachRule) {
  Report r = sample();
  const Finding& pin = r.findings()[0];
  const json& subject = r.subject();
  ExceptionEntry e = entry("python.pin.mismatch");
  EXPECT_TRUE(exceptionMatches(e, pin, subject));
  EXPECT_FALSE(exceptionMatches(entry("python.pin"), pin, subject));  // the code is exact
  // Package: a name (PEP 503 normalised) or a purl, whose version is the installed one.
  for (const char* p : {"model-server", "Model_Server", "pkg:pypi/model-server", "pkg:pypi/model-server@0.3.0"}) {
    e.package = p;
    EXPECT_TRUE(exceptionMatches(e, pin, subject)) << p;
  }
  for (const char* p : {"model", "pkg:pypi/model-server@0.2.0", "pkg:pypi/other"}) {
    e.package = p;
    EXPECT_FALSE(exceptionMatches(e, pin, subject)) << p;
  }
  e.package.clear();
  // Path: a glob, with or without the leading slash.
  for (const char* p : {"app/requirements.txt*", "/app/*", "*requirements*"}) {
    e.path = p;
    EXPECT_TRUE(exceptionMatches(e, pin, subject)) << p;
  }
  e.path = "srv/*";
  EXPECT_FALSE(exceptionMatches(e, pin, subject));
  e.path.clear();
  // Image: a glob on registry/repository.
  e.image = "registry.example.com/team/*";
  EXPECT_TRUE(exceptionMatches(e, pin, subject));
  e.image = "registry.example.com/other/*";
  EXPECT_FALSE(exceptionMatches(e, pin, subject));
  e.image = "team/model";
  EXPECT_TRUE(exceptionMatches(e, pin, subject));
}

TEST(ExceptionsApply, SuppressedStayAndDoNotCount) {
  Report r = sample();
  ASSERT_EQ(r.exitCode(2), kExitFindings);
  applyExceptions(r, {fileOf({entry("python.pin.mismatch")})}, kToday);
  EXPECT_TRUE(r.findings()[0].suppressed());
  EXPECT_EQ(r.findings()[0].suppression->reason, "0.3.0 is the tested build");
  EXPECT_EQ(r.exitCode(2), kExitOk);
  EXPECT_STREQ(r.verdict(2), "pass");
  EXPECT_EQ(r.exitCode(1), kExitFindings);  // the warning is still live
  json j = r.toJson(2);
  EXPECT_EQ(j["summary"]["findings"]["error"], 0);
  EXPECT_EQ(j["summary"]["suppressed"]["error"], 1);
  EXPECT_EQ(j["summary"]["verdict"], "pass");
  EXPECT_EQ(j["findings"][0]["suppression"]["reason"], "0.3.0 is the tested build");
  EXPECT_EQ(j["findings"][0]["suppression"]["expires"], "2027-03-01");
  EXPECT_EQ(j["exceptions"]["files"][0]["entries"][0]["status"], "applied");
  EXPECT_EQ(j["exceptions"]["files"][0]["entries"][0]["matched"], 1);
  // Read back: the summary's verdict and the finding's mark.
  auto doc = parseReportDoc(j);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_TRUE(doc->findings[0].suppressed);
  EXPECT_EQ(verdictOf(doc->summary, 2), "pass");
  ASSERT_EQ(doc->exceptions.size(), 1u);
  EXPECT_EQ(doc->exceptions[0].status, "applied");
  // What the signed predicate records.
  json s = exceptionsSummary(j);
  EXPECT_EQ(s["suppressed"]["error"], 1);
  EXPECT_EQ(s["files"][0]["sha256"], std::string(64, 'a'));
  ASSERT_EQ(s["findings"].size(), 1u);
  EXPECT_EQ(s["findings"][0]["code"], "python.pin.mismatch");
  EXPECT_EQ(s["findings"][0]["reason"], "0.3.0 is the tested build");
  EXPECT_EQ(s["findings"][0]["expires"], "2027-03-01");
  EXPECT_TRUE(exceptionsSummary(sample().toJson()).is_null());
}

TEST(ExceptionsApply, ExpiredFailsAndSuppressesNothing) {
  Report r = sample();
  ExceptionEntry e = entry("python.pin.mismatch");
  e.expires = "2026-12-02";
  applyExceptions(r, {fileOf({e})}, kToday);
  EXPECT_FALSE(r.findings()[0].suppressed());
  ASSERT_TRUE(r.hasFinding("exception.expired"));
  EXPECT_EQ(r.findings().back().severity, Severity::Error);
  EXPECT_NE(r.findings().back().message.find("waivers.yaml: exceptions[0] (python.pin.mismatch) expired on 2026-12-02"),
            std::string::npos);
  EXPECT_EQ(r.exitCode(2), kExitFindings);
  // The last day itself still applies.
  Report r2 = sample();
  e.expires = kToday;
  applyExceptions(r2, {fileOf({e})}, kToday);
  EXPECT_TRUE(r2.findings()[0].suppressed());
  EXPECT_FALSE(r2.hasFinding("exception.expired"));
}

TEST(ExceptionsApply, UnusedIsInfo) {
  Report r = sample();
  ExceptionEntry e = entry("python.pin.mismatch");
  e.package = "not-installed";
  applyExceptions(r, {fileOf({e})}, kToday);
  ASSERT_TRUE(r.hasFinding("exception.unused"));
  EXPECT_EQ(r.findings().back().severity, Severity::Info);
  EXPECT_EQ(r.toJson()["exceptions"]["files"][0]["entries"][0]["status"], "unused");
  EXPECT_EQ(r.exitCode(2), kExitFindings);  // the pin mismatch is live
}

TEST(ExceptionsApply, DigestMismatchIsRefused) {
  Report r = sample();
  r.add("blob.digest.mismatch", Severity::Error, "layer 0 does not have the digest its descriptor names",
        {{"layer", "sha256:00"}});
  ExceptionEntry e = entry("blob.digest.mismatch");
  applyExceptions(r, {fileOf({entry("python.pin.mismatch"), e})}, kToday);
  EXPECT_FALSE(r.findings()[2].suppressed());
  ASSERT_TRUE(r.hasFinding("exception.refused"));
  EXPECT_EQ(r.findings().back().severity, Severity::Error);
  EXPECT_EQ(r.exitCode(2), kExitFindings);
  EXPECT_EQ(r.toJson()["exceptions"]["files"][0]["entries"][1]["status"], "refused");
  for (const auto& c : unwaivableCodes()) EXPECT_TRUE(isUnwaivable(c)) << c;
  EXPECT_FALSE(isUnwaivable("python.pin.mismatch"));
}

TEST(ExceptionsFormats, SuppressedShownWithReasonEverywhere) {
  Report r = sample();
  applyExceptions(r, {fileOf({entry("python.pin.mismatch")})}, kToday);
  std::string text = r.toText(2);
  size_t live = text.find("Warnings (1)"), waived = text.find("Suppressed by exceptions (1)");
  ASSERT_NE(live, std::string::npos) << text;
  ASSERT_NE(waived, std::string::npos) << text;
  EXPECT_LT(live, waived);
  EXPECT_NE(text.find("reason: 0.3.0 is the tested build (expires 2027-03-01; waivers.yaml exceptions[0])"),
            std::string::npos);
  EXPECT_NE(text.find("  waived    1 error suppressed by exceptions"), std::string::npos) << text;
  EXPECT_EQ(text.find("Errors ("), std::string::npos);
  std::string html = toHtml(r, 2);
  EXPECT_NE(html.find("<table id=\"suppressed\">"), std::string::npos);
  EXPECT_NE(html.find("0.3.0 is the tested build</td><td>2027-03-01"), std::string::npos);
  json sarif = toSarif(r);
  int suppressedResults = 0;
  for (const auto& res : sarif["runs"][0]["results"])
    if (res.contains("suppressions")) {
      ++suppressedResults;
      EXPECT_EQ(res["ruleId"], "python.pin.mismatch");
      EXPECT_EQ(res["suppressions"][0]["kind"], "external");
      EXPECT_EQ(res["suppressions"][0]["status"], "accepted");
      EXPECT_EQ(res["suppressions"][0]["justification"],
                "0.3.0 is the tested build (expires 2027-03-01; waivers.yaml exceptions[0])");
    }
  EXPECT_EQ(suppressedResults, 1);
  std::string mdown = toMarkdown(r, 2);
  EXPECT_NE(mdown.find("## kernodeck audit: ✅ PASS"), std::string::npos) << mdown;
  EXPECT_NE(mdown.find("| error | 0 | 1 |"), std::string::npos) << mdown;
  EXPECT_NE(mdown.find("### Suppressed by exceptions (1)"), std::string::npos);
  EXPECT_NE(mdown.find("0.3.0 is the tested build | 2027\\-03\\-01"), std::string::npos) << mdown;
  EXPECT_EQ(render(r, Format::Markdown, 2), mdown);
  // A report without exceptions says nothing of them.
  Report plain = sample();
  EXPECT_FALSE(plain.toJson()["summary"].contains("suppressed"));
  EXPECT_EQ(plain.toText(2).find("uppressed"), std::string::npos);
  EXPECT_EQ(toHtml(plain, 2).find("suppressed"), std::string::npos);
  EXPECT_EQ(toSarif(plain).dump().find("suppressions"), std::string::npos);
}

TEST(ExceptionsFormats, MarkdownIsEscapedAndShortened) {
  Report r("audit");
  r.subject()["reference"] = "x";
  r.declareSteps({"resolve"});
  r.runStep("resolve", [] { return Status(); });
  r.add("image.secret.env", Severity::Error, "<img src=x> @octocat *bold* [link](http://x) | pipe");
  for (int i = 0; i < 3000; ++i)
    r.add("os.package.modified", Severity::Warning, "file " + std::to_string(i) + " modified",
          {{"path", "/usr/share/f" + std::to_string(i)}, {"package", "p" + std::to_string(i)}});
  std::string m = toMarkdown(r, 2);
  EXPECT_LE(m.size(), kMarkdownMaxChars);
  EXPECT_NE(m.find("&lt;img src=x&gt; \\@octocat \\*bold\\* \\[link\\]\\(http://x\\) \\| pipe"), std::string::npos);
  EXPECT_EQ(m.find("<img"), std::string::npos);
  EXPECT_NE(m.find("**Shortened:**"), std::string::npos);
  EXPECT_NE(m.find("left out to stay under 65536 characters"), std::string::npos);
  EXPECT_NE(m.find("| warning | 3000 |"), std::string::npos);  // the counts are whole
  std::string small = toMarkdown(sample(), 2);
  EXPECT_EQ(small.find("Shortened"), std::string::npos);
  // A pipe in a table cell's code span is escaped; a long message is cut at a character, not
  // inside one.
  Report odd = sample();
  ExceptionEntry e = entry("python.pin.mismatch");
  e.reason = std::string(299, 'x') + "é and more";
  applyExceptions(odd, {fileOf({e})}, kToday);
  odd.mutableFindings()[0].code = "python.pin|mismatch";
  std::string m2 = toMarkdown(odd, 2);
  EXPECT_NE(m2.find("`python.pin\\|mismatch`"), std::string::npos) << m2;
  EXPECT_NE(m2.find(std::string(299, 'x') + "é…"), std::string::npos);
}

TEST(ExceptionsDiff, MarkdownOfAnImageBump) {
  Report a = sample(), b = sample();
  a.section("python") = {{"environments", json::array({{{"prefix", "/usr/local"}, {"freeze", {"torch==2.1.0", "numpy==1.26.0", "old==1"}}}})},
                         {"torch", {{"version", "2.1.0+cu121"}, {"cuda", "12.1"}, {"hip", nullptr}}},
                         {"cuda_toolkit", "12.1"}};
  b.section("python") = {{"environments", json::array({{{"prefix", "/usr/local"}, {"freeze", {"torch==2.2.0", "numpy==1.26.0", "new==2"}}}})},
                         {"torch", {{"version", "2.2.0+cu121"}, {"cuda", "12.1"}, {"hip", nullptr}}},
                         {"cuda_toolkit", "12.1"}};
  a.section("os_packages") = {{"packages", json::array({{{"name", "libc6"}, {"version", "2.36-9"}}})}};
  b.section("os_packages") = {{"packages", json::array({{{"name", "libc6"}, {"version", "2.36-9+deb12u4"}}})}};
  ExceptionEntry pin = entry("python.pin.mismatch");
  ExceptionEntry old = entry("os.package.modified");
  old.expires = "2026-01-01";
  applyExceptions(b, {fileOf({pin, old})}, kToday);
  b.add("image.secret.env", Severity::Error, "AWS_SECRET_ACCESS_KEY is set in the config");
  auto da = record::parseDiffInput(a.toJson()), db = record::parseDiffInput(b.toJson());
  ASSERT_TRUE(da.ok() && db.ok());
  Report d = record::diffRecords(*da, *db);
  std::string m = toMarkdown(d, 1);
  for (const char* want : {"## kernodeck diff: ❌ FAIL", "### torch / CUDA build (1)", "torch 2.1.0\\+cu121",
                           "### Python packages (3)", "| changed | `torch` | /usr/local | 2.1.0 | 2.2.0 |",
                           "| added | `new` | /usr/local | — | 2 |", "| removed | `old` | /usr/local | 1 | — |",
                           "### OS packages (1)", "| changed | `libc6` | 2.36\\-9 | 2.36\\-9\\+deb12u4 |",
                           "### New findings", "`image.secret.env`", "### Exceptions added (2)",
                           "### Exceptions expired (1)", "exception expired in B: os.package.modified"})
    EXPECT_NE(m.find(want), std::string::npos) << want << "\n" << m;
  EXPECT_EQ(m.find("### Fixed findings"), std::string::npos);
  // The pin mismatch suppressed in B is not new: it is the same finding.
  EXPECT_EQ(m.find("new in B: python.pin.mismatch"), std::string::npos) << m;
}

}  // namespace report_exceptions_test
