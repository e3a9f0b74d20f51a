// Grouping, the text summary and the formats other tools read, on reports built here.
// (The official schemas validate the same formats on real audits in
// tests/integration/output_formats_test.cc.)
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"
#include "kernodeck/report/rules.h"

namespace report_formats_test {

using namespace kernodeck;
using namespace kernodeck::report;
using nlohmann::json;

namespace {

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A developer machine with one heavily modified package: 792 files of nodejs, and a few others.
Report heavilyModified() {
  Report r("audit");
  r.subject()["reference"] = "dir:/";
  r.declareSteps({"resolve", "os"});
  r.runStep("resolve", [] { return Status(); });
  r.runStep("os", [] { return Status(); });
  for (int i = 0; i < 792; ++i) {
    std::string p = "/usr/share/nodejs/mod" + std::to_string(i) + ".js";
    r.add("os.package.modified", Severity::Error, p + " of package nodejs differs from dpkg's md5sum",
          {{"package", "nodejs"}, {"path", p}, {"layer", "0"}});
  }
  r.add("os.package.modified", Severity::Error, "/usr/bin/python3.11 of package python3.11 differs",
        {{"package", "python3.11"}, {"path", "/usr/bin/python3.11"}});
  for (int i = 0; i < 20; ++i)
    r.add("python.record.unlisted", Severity::Info, "files not in RECORD", {{"package", "pkg" + std::to_string(i)}});
  r.add("image.tag.mutable", Severity::Warning, "the reference names no tag");
  r.section("os") = {{"id", "debian"},
                     {"version_id", "12"},
                     {"pretty_name", "Debian GNU/Linux 12 (bookworm)"},
                     {"architecture", "amd64"}};
  r.section("os_packages") = {{"manager", "dpkg"},
                              {"count", 2},
                              {"files_verified", 5000},
                              {"modified", 793},
                              {"missing", 0},
                              {"packages", json::array({{{"name", "nodejs"},
                                                         {"version", "18.19.0+dfsg-6~deb12u2"},
                                                         {"architecture", "amd64"},
                                                         {"source", "nodejs"}},
                                                        {{"name", "python3.11"},
                                                         {"version", "3.11.2-6+deb12u1"},
                                                         {"architecture", "amd64"},
                                                         {"source", "python3.11"}}})}};
  r.section("python") = {
      {"environments",
       json::array(
           {{{"kind", "venv"},
             {"prefix", "/home/dev/src/app/.venv"},
             {"interpreter", "/home/dev/src/app/.venv/bin/python"},
             {"python_version", "3.11.2"},
             {"packages",
              json::array(
                  {{{"name", "torch"},
                    {"version", "2.3.0+cu121"},
                    {"location", "/x"},
                    {"record", true},
                    {"archive_hashes", {{"sha256", std::string(64, 'a')}}}},
                   {{"name", "Zope.Interface"}, {"version", "6.0"}, {"location", "/x"}, {"record", true}}})}}})},
      {"not_searched", json::array({"/proc", "3 directories deeper than 6 levels (e.g. /a/b/c/d/e/f/g)"})},
      {"torch", {{"version", "2.3.0+cu121"}, {"cuda", "12.1"}, {"hip", nullptr}, {"location", "/x"}}},
      {"cuda_toolkit", "12.1.105"},
      {"nvidia_wheels", {{"nvidia-cuda-runtime-cu12", "12.1.105"}}}};
  return r;
}

}  // namespace

TEST(FindingGroups, OneCodeAndPackageIsOneGroupErrorsFirst) {
  Report r = heavilyModified();
  auto groups = groupFindings(r.findings());
  ASSERT_EQ(groups.size(), 2u + 20u + 1u);
  EXPECT_EQ(groups[0].code, "os.package.modified");
  EXPECT_EQ(groups[0].package, "nodejs");
  EXPECT_EQ(groups[0].count(), 792u);
  EXPECT_EQ(groups[0].paths().size(), 792u);
  EXPECT_EQ(groups[0].headline(), "792 findings for package nodejs");
  EXPECT_EQ(groups[1].package, "python3.11");
  EXPECT_EQ(groups[1].headline(), "/usr/bin/python3.11 of package python3.11 differs");  // one member: its message
  EXPECT_EQ(groups[2].severity, Severity::Warning);
  // Without a package, the layer keys the group.
  Report l("audit");
  for (const char* layer : {"1:sha256:a", "1:sha256:a", "2:sha256:b"})
    l.add("layer.path.unsafe", Severity::Error, "refused", {{"layer", layer}, {"path", "../x"}});
  auto lg = groupFindings(l.findings());
  ASSERT_EQ(lg.size(), 2u);
  EXPECT_EQ(lg[0].layer, "1:sha256:a");
  EXPECT_EQ(lg[0].count(), 2u);
}

TEST(TextReport, SummaryFirstAndAHeavilyModifiedPackageFitsAScreen) {
  Report r = heavilyModified();
  std::string t = r.toText(2);
  EXPECT_LE(lines(t), 60u) << t;
  size_t verdict = t.find("verdict   FAIL");
  ASSERT_NE(verdict, std::string::npos) << t;
  EXPECT_LT(verdict, t.find("Steps"));
  EXPECT_NE(t.find("793 error, 1 warning, 20 info in 23 groups"), std::string::npos) << t;
  EXPECT_NE(t.find("793 os.package.modified, 20 python.record.unlisted, 1 image.tag.mutable"), std::string::npos) << t;
  EXPECT_NE(t.find("os.package.modified: 792 findings for package nodejs"), std::string::npos);
  EXPECT_NE(t.find("/usr/share/nodejs/mod2.js"), std::string::npos);
  EXPECT_EQ(t.find("/usr/share/nodejs/mod3.js"), std::string::npos);
  EXPECT_NE(t.find("and 789 more"), std::string::npos);
  // What was found.
  EXPECT_NE(t.find("Debian GNU/Linux 12 (bookworm), amd64"), std::string::npos) << t;
  EXPECT_NE(t.find("venv /home/dev/src/app/.venv  Python 3.11.2  /home/dev/src/app/.venv/bin/python  2 packages"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("2.3.0+cu121  torch.version.cuda 12.1, torch.version.hip None"), std::string::npos) << t;
  EXPECT_NE(t.find("toolkit 12.1.105, 1 nvidia-* wheels"), std::string::npos) << t;
  EXPECT_NE(t.find("deeper than 6 levels"), std::string::npos) << t;
  // The verdict follows --fail-on.
  EXPECT_NE(r.toText(-1).find("verdict   PASS"), std::string::npos);
  Report empty("audit");
  EXPECT_NE(empty.toText().find("findings  none"), std::string::npos);
}

TEST(JsonReport, KeepsEveryFindingAndListsGroupsWithEveryPath) {
  json j = heavilyModified().toJson(2);
  EXPECT_EQ(j["findings"].size(), 792u + 1u + 20u + 1u);
  ASSERT_EQ(j["groups"][0]["count"], 792);
  EXPECT_EQ(j["groups"][0]["paths"].size(), 792u);
  EXPECT_EQ(j["groups"][0]["package"], "nodejs");
  EXPECT_EQ(j["summary"]["verdict"], "fail");
  EXPECT_EQ(j["summary"]["fail_on"], "error");
  EXPECT_EQ(j["summary"]["by_code"]["os.package.modified"], 793);
  EXPECT_EQ(j["summary"]["groups"], 23);
}

TEST(Formats, ParseNamesAndRefuseOthers) {
  struct Case {
    const char* name;
    bool ok;
  } cases[] = {{"text", true}, {"json", true},  {"sarif", true}, {"cyclonedx", true}, {"spdx", true},
               {"html", true}, {"JSON", false}, {"xml", false},  {"", false}};
  for (const auto& c : cases) EXPECT_EQ(parseFormat(c.name).ok(), c.ok) << c.name;
  EXPECT_NE(parseFormat("xml").error().message.find("sarif"), std::string::npos);
}

TEST(Formats, SarifRulesFromCodesResultsPerGroupPathsAsLocations) {
  Report r = heavilyModified();
  r.add("python.pin.mismatch", Severity::Error, "torch pinned",
        {{"path", "/app/requirements.txt:7"}, {"package", "torch"}});
  json s = toSarif(r);
  EXPECT_EQ(s["version"], "2.1.0");
  const json& run = s["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["rules"].size(), 4u);
  EXPECT_EQ(run["tool"]["driver"]["rules"][0]["id"], "os.package.modified");
  const json& first = run["results"][0];
  EXPECT_EQ(first["ruleId"], "os.package.modified");
  EXPECT_EQ(first["level"], "error");
  EXPECT_EQ(first["locations"].size(), 792u);
  EXPECT_EQ(first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "usr/share/nodejs/mod0.js");
  EXPECT_EQ(first["properties"]["count"], 792);
  bool pin = false, info = false;
  for (const auto& res : run["results"]) {
    if (res["ruleId"] == "python.pin.mismatch") {
      pin = true;
      EXPECT_EQ(res["locations"][0]["physicalLocation"]["region"]["startLine"], 7);
      EXPECT_EQ(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "app/requirements.txt");
    }
    if (res["ruleId"] == "python.record.unlisted") {
      info = true;
      EXPECT_EQ(res["level"], "note");
      EXPECT_EQ(res["locations"][0]["logicalLocations"][0]["kind"], "package");
    }
  }
  EXPECT_TRUE(pin && info);
  EXPECT_TRUE(run["invocations"][0]["executionSuccessful"]);
}

TEST(Formats, SbomsListOsAndPythonComponentsWithHashesAndVerification) {
  Report r = heavilyModified();
  r.subject()["manifest_digest"] = "sha256:" + std::string(64, 'b');
  json c = toCycloneDx(r, 2);
  EXPECT_EQ(c["bomFormat"], "CycloneDX");
  EXPECT_EQ(c["specVersion"], "1.5");
  EXPECT_EQ(c["metadata"]["component"]["hashes"][0]["content"], std::string(64, 'b'));
  auto prop = [](const json& comp, const std::string& name) -> std::string {
    for (const auto& p : comp["properties"])
      if (p["name"] == name) return p["value"];
    return "";
  };
  EXPECT_EQ(prop(c["metadata"], "kernodeck:verdict"), "fail");
  std::map<std::string, json> byName;
  for (const auto& comp : c["components"]) byName[comp["name"].get<std::string>()] = comp;
  ASSERT_TRUE(byName.count("debian"));
  EXPECT_EQ(byName["debian"]["type"], "operating-system");
  EXPECT_EQ(byName["nodejs"]["purl"], "pkg:deb/debian/nodejs@18.19.0%2Bdfsg-6~deb12u2?arch=amd64&distro=debian-12");
  EXPECT_EQ(prop(byName["nodejs"], "kernodeck:verification"), "findings: os.package.modified=792");
  EXPECT_EQ(prop(byName["nodejs"], "kernodeck:worst_severity"), "error");
  EXPECT_EQ(byName["torch"]["purl"], "pkg:pypi/torch@2.3.0%2Bcu121");
  EXPECT_EQ(byName["torch"]["hashes"][0]["alg"], "SHA-256");
  EXPECT_EQ(prop(byName["torch"], "kernodeck:verification"), "verified");
  EXPECT_EQ(byName["Zope.Interface"]["purl"], "pkg:pypi/zope-interface@6.0");
  EXPECT_EQ(byName["python"]["type"], "application");
  EXPECT_EQ(c["dependencies"][0]["dependsOn"].size(), c["components"].size());

  json s = toSpdx(r, 2);
  EXPECT_EQ(s["spdxVersion"], "SPDX-2.3");
  EXPECT_EQ(s["packages"].size(), c["components"].size() + 1);
  EXPECT_EQ(s["packages"][0]["checksums"][0]["algorithm"], "SHA256");
  EXPECT_EQ(s["relationships"][0]["relationshipType"], "DESCRIBES");
  EXPECT_NE(s["documentNamespace"].get<std::string>().find("kernodeck-"), std::string::npos);
  // The same report gives the same serial number; another report another.
  EXPECT_EQ(toCycloneDx(r, 2)["serialNumber"], c["serialNumber"]);
  EXPECT_NE(toCycloneDx(Report("audit"), 2)["serialNumber"], c["serialNumber"]);
  // And a second later: the report's JSON says when it was written ("created"), which is not
  // what the numbers name.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(toCycloneDx(r, 2)["serialNumber"], c["serialNumber"]);
  EXPECT_EQ(toSpdx(r, 2)["documentNamespace"], s["documentNamespace"]);
}

TEST(Formats, HtmlIsStandaloneAndEscapes) {
  Report r("audit");
  r.subject()["reference"] = "oci:/img<script>";
  r.add("x.y", Severity::Error, "a <b>bold</b> & \"quoted\" message", {{"path", "/p"}});
  std::string h = toHtml(r, 2);
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("<b>bold"), std::string::npos);
  EXPECT_NE(h.find("a &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; message"), std::string::npos);
  EXPECT_EQ(h.find("http"), std::string::npos);  // no external resource
  EXPECT_NE(h.find("class=\"fail\""), std::string::npos);
}

// GitHub code scanning's limits: every result has a location, none more than 1,000; a large
// group is cut into path ranges, each with its own stable fingerprint.
TEST(Formats, SarifEveryResultHasALocationAndAtMostAThousand) {
  Report r("audit");
  r.subject()["reference"] = "registry.example:5000/team/app:1.0";
  for (int i = 2499; i >= 0; --i) {
    char p[64];
    std::snprintf(p, sizeof p, "/usr/lib/big/f%04d.so", i);
    r.add("os.package.modified", Severity::Error, std::string(p) + " differs", {{"package", "big"}, {"path", p}});
  }
  r.add("image.secret.env", Severity::Error, "AWS_SECRET_ACCESS_KEY is set in the config");
  r.add("image.secret.env", Severity::Error, "GITHUB_TOKEN is set in the config");
  r.add("python.record.unlisted", Severity::Info, "3 files", {{"package", "six"}});
  json s = toSarif(r);
  const json& results = s["runs"][0]["results"];
  ASSERT_EQ(results.size(), 3u + 1u + 1u);
  std::set<std::string> prints;
  for (const auto& res : results) {
    ASSERT_TRUE(res.contains("locations")) << res.dump();
    EXPECT_GE(res["locations"].size(), 1u);
    EXPECT_LE(res["locations"].size(), kSarifMaxLocations);
    for (const auto& loc : res["locations"])
      EXPECT_FALSE(loc["physicalLocation"]["artifactLocation"]["uri"].get<std::string>().empty());
    prints.insert(res["partialFingerprints"]["kernodeckGroup/v1"].get<std::string>());
  }
  EXPECT_EQ(prints.size(), results.size());  // each result its own identity
  // 2,500 paths: 1,000 + 1,000 + 500, in path order, each part a range.
  EXPECT_EQ(results[0]["locations"].size(), 1000u);
  EXPECT_EQ(results[1]["locations"].size(), 1000u);
  EXPECT_EQ(results[2]["locations"].size(), 500u);
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "usr/lib/big/f0000.so");
  EXPECT_EQ(results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "usr/lib/big/f1000.so");
  EXPECT_EQ(results[2]["locations"][499]["physicalLocation"]["artifactLocation"]["uri"], "usr/lib/big/f2499.so");
  EXPECT_NE(results[1]["message"]["text"].get<std::string>().find("part 2 of 3: 1000 paths from /usr/lib/big/f1000.so"),
            std::string::npos)
      << results[1]["message"];
  EXPECT_EQ(results[1]["properties"]["count"], 1000);
  EXPECT_EQ(results[1]["properties"]["group_count"], 2500);
  EXPECT_EQ(results[0]["locations"][0]["logicalLocations"][0]["name"], "big");
  // A finding about the image itself is located at the image, its reference a relative URI.
  const json& secret = results[3];
  EXPECT_EQ(secret["ruleId"], "image.secret.env");
  EXPECT_EQ(secret["properties"]["count"], 2);
  ASSERT_EQ(secret["locations"].size(), 1u);
  EXPECT_EQ(secret["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "registry.example%3A5000/team/app%3A1.0");
  EXPECT_EQ(results[4]["locations"][0]["logicalLocations"][0]["name"], "six");
  // The same report gives the same fingerprints; the messages are not part of them.
  Report again = r;
  json s2 = toSarif(again);
  EXPECT_EQ(s2["runs"][0]["results"][2]["partialFingerprints"], results[2]["partialFingerprints"]);
  Report other("audit");
  other.add("image.secret.env", Severity::Error, "another message");
  EXPECT_EQ(toSarif(other)["runs"][0]["results"][0]["partialFingerprints"], secret["partialFingerprints"]);
}

// Rules: fixed texts from the README per code, never a finding's message; security findings
// carry GitHub's security-severity.
TEST(Formats, SarifRulesHaveReadmeTextsHelpAndSecuritySeverity) {
  Report r("audit");
  r.add("os.package.modified", Severity::Error, "/usr/bin/x of package x differs",
        {{"package", "x"}, {"path", "/usr/bin/x"}});
  r.add("image.tag.mutable", Severity::Warning, "named by tag");
  r.add("os.package.conffile.missing", Severity::Info, "/etc/x.conf is missing", {{"path", "/etc/x.conf"}});
  r.add("nobody.documents.this", Severity::Warning, "odd");
  std::map<std::string, json> rules;
  json sarif = toSarif(r);
  for (const auto& rule : sarif["runs"][0]["tool"]["driver"]["rules"]) rules[rule["id"].get<std::string>()] = rule;
  ASSERT_EQ(rules.size(), 4u);
  const json& mod = rules["os.package.modified"];
  EXPECT_EQ(mod["fullDescription"]["text"],
            "A file dpkg, rpm or apk owns differs from its database (manager, verify in the evidence).");
  EXPECT_EQ(mod["shortDescription"]["text"], "A file dpkg, rpm or apk owns differs from its database.");
  EXPECT_EQ(mod["name"], "OsPackageModified");
  EXPECT_NE(mod["help"]["text"].get<std::string>().find("Reinstall the package"), std::string::npos);
  EXPECT_NE(mod["help"]["markdown"].get<std::string>().find("section *Packages: OS, Python, torch/CUDA*"),
            std::string::npos);
  EXPECT_EQ(mod["properties"]["security-severity"], "7.5");
  EXPECT_EQ(mod["defaultConfiguration"]["level"], "error");
  const json& tag = rules["image.tag.mutable"];
  EXPECT_FALSE(tag["properties"].contains("security-severity"));
  EXPECT_EQ(tag["defaultConfiguration"]["level"], "warning");
  // "`os.package.conffile.modified` / `.missing`": the suffix form is documented too.
  EXPECT_EQ(rules["os.package.conffile.missing"]["fullDescription"]["text"],
            "A configuration file under /etc changed or is gone.");
  EXPECT_EQ(rules["os.package.conffile.missing"]["defaultConfiguration"]["level"], "note");
  EXPECT_NE(rules["nobody.documents.this"]["help"]["text"].get<std::string>().find("not described"), std::string::npos);
  for (const auto& [id, rule] : rules) EXPECT_NE(rule["fullDescription"]["text"], "odd") << id;
}

TEST(Formats, FindingTablesParseEveryCodeForm) {
  auto codes = parseFindingTables(
      "## Area\n\n| code | severity | meaning |\n|---|---|---|\n"
      "| `a.b.c` / `.d` | error | one \\| two |\n"
      "| `x.y`, `z.w` | warning / info | both |\n"
      "| `s.count` / `.shape` / `.ids` | error | outputs |\n\n"
      "| format | for | what |\n|---|---|---|\n| `not.a.code` | x | y |\n");
  std::vector<std::string> got;
  for (const auto& c : codes) got.push_back(c.code);
  EXPECT_EQ(got, (std::vector<std::string>{"a.b.c", "a.b.d", "x.y", "z.w", "s.count", "s.shape", "s.ids"}));
  EXPECT_EQ(codes[1].section, "Area");
  EXPECT_EQ(codes[1].meaning, "one \\| two");
  EXPECT_EQ(codes[2].severity, "warning / info");
}

// The findings tables compiled into the binary are those of the tree (docs/findings.md): every
// code they list has its rule text (cmake reconfigures when docs/findings.md changes).
TEST(Formats, EveryReadmeCodeHasItsRuleText) {
  std::ifstream in(std::string(SOURCE_DIR) + "/docs/findings.md");
  std::stringstream text;
  text << in.rdbuf();
  auto codes = parseFindingTables(text.str());
  EXPECT_GT(codes.size(), 100u);
  for (const auto& c : codes) {
    const DocumentedCode* d = documentedCode(c.code);
    ASSERT_NE(d, nullptr) << c.code << " is in docs/findings.md but not in the compiled copy: re-run cmake";
    EXPECT_EQ(d->meaning, c.meaning) << c.code;
  }
}

// rpm systems (with another database beside), conda environments: their purls and the hashes
// the image holds, in CycloneDX and SPDX alike.
TEST(Formats, SbomsListRpmApkAndCondaPackagesWithQualifiersAndHashes) {
  Report r("audit");
  r.section("os") = {{"id", "rhel"}, {"version_id", "8.9"}};
  json rpm = {{"name", "openssl-libs"},
              {"version", "1:1.1.1k-9.el8_7"},
              {"architecture", "x86_64"},
              {"source", "openssl-1.1.1k-9.el8_7.src.rpm"},
              {"sha256header", std::string(64, 'd')},
              {"sigmd5", std::string(32, 'e')}};
  r.section("os_packages") = {{"manager", "rpm"},
                              {"files_verified", 3},
                              {"packages", json::array({rpm})},
                              {"other", json::array({{{"manager", "apk"},
                                                      {"packages", json::array({{{"name", "busybox"},
                                                                                 {"version", "1.36.1-r15"},
                                                                                 {"architecture", "x86_64"},
                                                                                 {"source", "busybox"}}})}}})}};
  r.section("python") = {
      {"environments", json::array()},
      {"conda", json::array({{{"prefix", "/opt/conda"},
                              {"files_verified", 10},
                              {"packages", json::array({{{"name", "numpy"},
                                                         {"version", "1.26.4"},
                                                         {"build", "py311h64a7726_0"},
                                                         {"channel", "https://conda.anaconda.org/conda-forge"},
                                                         {"subdir", "linux-64"},
                                                         {"file", "numpy-1.26.4-py311h64a7726_0.conda"},
                                                         {"sha256", std::string(64, 'f')},
                                                         {"md5", std::string(32, '0')}}})}}})}};
  r.add("conda.package.modified", Severity::Error, "changed", {{"package", "numpy"}, {"path", "/opt/conda/x"}});
  json c = toCycloneDx(r, 2);
  std::map<std::string, json> byName;
  for (const auto& comp : c["components"]) byName[comp["name"].get<std::string>()] = comp;
  EXPECT_EQ(byName["openssl-libs"]["purl"],
            "pkg:rpm/redhat/openssl-libs@1.1.1k-9.el8_7?arch=x86_64&distro=rhel-8.9&epoch=1&"
            "upstream=openssl-1.1.1k-9.el8_7.src.rpm");
  std::string props = byName["openssl-libs"]["properties"].dump();
  EXPECT_NE(props.find("kernodeck:rpm:sha256header"), std::string::npos) << props;
  EXPECT_EQ(byName["busybox"]["purl"], "pkg:apk/redhat/busybox@1.36.1-r15?arch=x86_64&distro=rhel-8.9");
  EXPECT_EQ(byName["numpy"]["purl"],
            "pkg:conda/numpy@1.26.4?build=py311h64a7726_0&channel=conda-forge&subdir=linux-64&type=conda");
  ASSERT_EQ(byName["numpy"]["hashes"].size(), 2u);
  EXPECT_NE(byName["numpy"]["properties"].dump().find("findings: conda.package.modified=1"), std::string::npos);
  json s = toSpdx(r, 2);
  bool spdxRpm = false, spdxConda = false;
  for (const auto& p : s["packages"]) {
    if (p["name"] == "openssl-libs")
      spdxRpm = p["externalRefs"][0]["referenceLocator"] == byName["openssl-libs"]["purl"];
    if (p["name"] == "numpy") spdxConda = p["checksums"].size() == 2;
  }
  EXPECT_TRUE(spdxRpm && spdxConda) << s.dump(1);
}

}  // namespace report_formats_test
