// Grouping, the text summary and the formats other tools read, on reports built here.
// (The official schemas validate the same formats on real audits in
// tests/integration/output_formats_test.cc.)
#include <gtest/gtest.h>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"

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
  EXPECT_EQ(byName["nodejs"]["purl"], "pkg:deb/debian/nodejs@18.19.0%2Bdfsg-6~deb12u2?arch=amd64");
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
