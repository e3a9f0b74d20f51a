// The audit's output as people and tools read it: the text summary with grouped findings on a
// developer-machine-like tree, every --format validated against the official schemas
// (tests/fixtures/schemas, with Debian's python3-jsonschema), the HTML page rendered in headless
// Chromium, --python targeting, and the CLI's help and usage-error contract.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "npm_checkers.h"
#include "support.h"

namespace integration_output_formats_test {

using nlohmann::json;
using namespace kdktest;
namespace fs = std::filesystem;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kSchemas = std::string(SOURCE_DIR) + "/tests/fixtures/schemas/";
const std::string kValidate = "/usr/bin/python3 " + std::string(SOURCE_DIR) + "/tests/tools/validate_schema.py ";

void put(const std::string& root, const std::string& rel, const std::string& content) {
  fs::path p = fs::path(root) / rel;
  fs::create_directories(p.parent_path());
  writeFile(p.string(), content);
}

std::string md5(const std::string& s) {
  kernodeck::util::Hasher h("md5");
  h.update(s);
  return h.hex();
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A root filesystem like a developer machine's: Debian with nodejs, whose 300 files were all
// changed after install, and the project's virtual environment five directories down.
std::string developerMachine() {
  std::string root = tempDir("devbox");
  put(root, "etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n");
  put(root, "var/lib/dpkg/status",
      "Package: nodejs\nStatus: install ok installed\nArchitecture: amd64\nVersion: 18.19.0+dfsg-6~deb12u2\n\n"
      "Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nSource: foo\nVersion: 1:2.0-1\n\n");
  std::string list, sums;
  for (int i = 0; i < 300; ++i) {
    std::string p = "usr/share/nodejs/lib/m" + std::to_string(i) + ".js";
    put(root, p, "changed " + std::to_string(i) + "\n");
    list += "/" + p + "\n";
    sums += md5("original " + std::to_string(i) + "\n") + "  " + p + "\n";
  }
  put(root, "var/lib/dpkg/info/nodejs.list", list);
  put(root, "var/lib/dpkg/info/nodejs.md5sums", sums);
  put(root, "usr/lib/libfoo.so.1", "foo");
  put(root, "var/lib/dpkg/info/libfoo1:amd64.list", "/usr/lib/libfoo.so.1\n");
  put(root, "var/lib/dpkg/info/libfoo1:amd64.md5sums", md5("foo") + "  usr/lib/libfoo.so.1\n");
  const std::string venv = "home/dev/src/app/.venv/";
  const std::string site = venv + "lib/python3.11/site-packages/";
  put(root, venv + "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
  put(root, venv + "bin/python", "stand-in");
  put(root, site + "torch/version.py", "__version__ = '2.3.0+cu121'\ndebug = False\ncuda = '12.1'\nhip = None\n");
  put(root, site + "torch-2.3.0+cu121.dist-info/METADATA",
      "Metadata-Version: 2.1\nName: torch\nVersion: 2.3.0+cu121\n");
  put(root, site + "torch-2.3.0+cu121.dist-info/direct_url.json",
      "{\"url\": \"https://download.pytorch.org/whl/cu121/torch-2.3.0%2Bcu121-cp311-cp311-linux_x86_64.whl\", "
      "\"archive_info\": {\"hashes\": {\"sha256\": \"" +
          std::string(64, 'c') + "\"}}}");
  put(root, site + "attrs-23.1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: attrs\nVersion: 23.1.0\n");
  return root;
}

// The subjects every format is checked on: the developer-like tree, the demo image and (when the
// fixture can be built) a real Debian root filesystem made by debootstrap.
std::vector<std::string> formatSubjects(const std::string& base) {
  std::vector<std::string> subjects = {"dir:" + developerMachine()};
  EXPECT_FALSE(
      mkimage(json::parse(readFile(std::string(SOURCE_DIR) + "/examples/demo/image.json")), base + "/demo").empty());
  subjects.push_back("oci:" + base + "/demo:1.0");
  if (::geteuid() == 0 && haveTool("debootstrap")) {
    RunResult fx = run(std::string(SOURCE_DIR) + "/tests/fixtures/debootstrap-python");
    if (fx.code == 0) subjects.push_back("dir:" + fx.out.substr(0, fx.out.find('\n')));
  }
  return subjects;
}

void expectValid(const std::string& schema, const std::string& doc) {
  RunResult v = run(kValidate + kSchemas + schema + " " + doc);
  EXPECT_EQ(v.code, 0) << schema << " rejects " << doc << ":\n" << v.err;
}

}  // namespace

TEST(OutputFormats, DeveloperMachineSummaryGroupsAndFitsAScreen) {
  std::string root = developerMachine();
  RunResult t = run(K + " audit dir:" + root);
  EXPECT_EQ(t.code, 1) << t.err;
  EXPECT_LE(lines(t.out), 50u) << t.out;
  EXPECT_EQ(t.out.find("verdict   FAIL"), t.out.find("verdict"));
  EXPECT_LT(t.out.find("verdict"), t.out.find("Steps")) << t.out;
  EXPECT_NE(t.out.find("os.package.modified: 300 findings for package nodejs"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("and 297 more"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("Debian GNU/Linux 12 (bookworm)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("2 packages, 301 files verified, 300 modified"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("venv /home/dev/src/app/.venv  Python 3.11.2  /home/dev/src/app/.venv/bin/python  2 packages"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("torch     2.3.0+cu121  torch.version.cuda 12.1, torch.version.hip None"), std::string::npos)
      << t.out;

  // JSON (and its --json alias) keeps every finding and every path of the group.
  for (const char* flag : {"--json", "--format json"}) {
    RunResult j = run(K + " audit " + flag + " dir:" + root);
    json r = json::parse(j.out, nullptr, false);
    ASSERT_TRUE(r.is_object()) << flag;
    EXPECT_EQ(countFindings(r, "os.package.modified"), 300);
    ASSERT_FALSE(r["groups"].empty());
    EXPECT_EQ(r["groups"][0]["paths"].size(), 300u);
    EXPECT_EQ(r["summary"]["verdict"], "fail");
    EXPECT_EQ(r["python"]["environments"].size(), 1u);
  }
}

TEST(OutputFormats, SarifCycloneDxSpdxValidateAndHtmlRendersInChromium) {
  if (!haveTool("/usr/bin/python3") || run("/usr/bin/python3 -c 'import jsonschema'").code != 0)
    GTEST_SKIP() << "needs python3-jsonschema (scripts/deps --test)";
  std::string base = tempDir("formats");
  std::vector<std::string> subjects = formatSubjects(base);
  int n = 0;
  for (const auto& s : subjects) {
    std::string out = base + "/" + std::to_string(n++);
    for (const char* f : {"sarif", "cyclonedx", "spdx"}) {
      RunResult a = run(K + " audit --format " + f + " -o " + out + "." + f + " " + s);
      EXPECT_TRUE(a.code == 0 || a.code == 1) << s << " " << f << ": " << a.err;
    }
    expectValid("sarif-schema-2.1.0.json", out + ".sarif");
    expectValid("bom-1.5.schema.json", out + ".cyclonedx");
    expectValid("spdx-schema-2.3.json", out + ".spdx");
    json sbom = json::parse(readFile(out + ".cyclonedx"));
    EXPECT_GT(sbom["components"].size(), 1u) << s;
  }
  // The SBOM of the tree names the OS and Python components, the wheel's hash and the verdicts.
  json cdx = json::parse(readFile(base + "/0.cyclonedx"));
  std::string dump = cdx.dump();
  EXPECT_NE(dump.find("\"pkg:pypi/torch@2.3.0%2Bcu121\""), std::string::npos);
  EXPECT_NE(dump.find(std::string(64, 'c')), std::string::npos);
  EXPECT_NE(dump.find("findings: os.package.modified=300"), std::string::npos);
  EXPECT_NE(dump.find("\"operating-system\""), std::string::npos);
  // The validator is not a rubber stamp: a broken document is refused.
  json bad = json::parse(readFile(base + "/0.sarif"));
  bad["runs"][0]["results"][0]["level"] = "catastrophic";
  writeFile(base + "/bad.sarif", bad.dump());
  EXPECT_EQ(run(kValidate + kSchemas + "sarif-schema-2.1.0.json " + base + "/bad.sarif").code, 1);
  json badSpdx = json::parse(readFile(base + "/0.spdx"));
  badSpdx["packages"][0]["filesAnalyzed"] = "no";  // a boolean
  writeFile(base + "/bad.spdx", badSpdx.dump());
  EXPECT_EQ(run(kValidate + kSchemas + "spdx-schema-2.3.json " + base + "/bad.spdx").code, 1);

  // HTML: one page, rendered offline by headless Chromium.
  ASSERT_EQ(run(K + " audit --format html -o " + base + "/report.html " + subjects[0]).code, 1);
  if (!haveTool("chromium")) GTEST_SKIP() << "needs chromium";
  Rendered page = renderInChromium(base + "/report.html", base);
  ASSERT_GT(page.png.size(), 2000u) << page.err;
  EXPECT_EQ(page.png.substr(1, 3), "PNG");
  EXPECT_NE(page.dom.find("class=\"fail\">Verdict: <strong>fail</strong>"), std::string::npos)
      << page.dom.substr(0, 2000);
  EXPECT_NE(page.dom.find("300 findings for package nodejs"), std::string::npos);
}

// GitHub code scanning's rules, as the SARIF multitool checks them ("Sarif;Gh"), on the SARIF
// of each subject: no error, and no result over GitHub's 1,000 locations. The checker is not a
// rubber stamp: a result without a location and a rule without help are errors.
TEST(OutputFormats, SarifPassesTheMultitoolWithGithubRules) {
  if (auto missing = npmCheckersMissing(); !missing.empty()) GTEST_SKIP() << "needs " << missing;
  std::string base = tempDir("sarif-gh");
  int n = 0;
  for (const auto& s : formatSubjects(base)) {
    std::string out = base + "/" + std::to_string(n++) + ".sarif";
    RunResult a = run(K + " audit --format sarif -o " + out + " " + s);
    ASSERT_TRUE(a.code == 0 || a.code == 1) << s << ": " << a.err;
    json sarif = json::parse(readFile(out));
    EXPECT_FALSE(sarif["runs"][0]["results"].empty()) << s;
    // GitHub refuses a result over 1,000 locations (the multitool does not check that count).
    for (const auto& res : sarif["runs"][0]["results"]) {
      EXPECT_GE(res["locations"].size(), 1u) << s;
      EXPECT_LE(res["locations"].size(), 1000u) << s;
    }
    auto errors = sarifMultitoolErrors(out, out + ".log");
    EXPECT_TRUE(errors.empty()) << s << ":\n" << kernodeck::util::join(errors, "\n");
  }
  json bad = json::parse(readFile(base + "/0.sarif"));
  json& res = bad["runs"][0]["results"][0];
  res.erase("locations");
  bad["runs"][0]["tool"]["driver"]["rules"][0].erase("help");
  writeFile(base + "/bad.sarif", bad.dump());
  std::string all = kernodeck::util::join(sarifMultitoolErrors(base + "/bad.sarif", base + "/bad.log"), "\n");
  EXPECT_NE(all.find("GH1015"), std::string::npos) << all;  // no locations
  EXPECT_NE(all.find("GH2012"), std::string::npos) << all;  // no help
}

// Every purl of the CycloneDX and SPDX documents parses with packageurl-js and carries arch and
// distro (deb, rpm, apk) and, where the report says the source package differs, upstream; the
// CycloneDX document passes the CycloneDX library's strict validator.
TEST(OutputFormats, SbomPurlsParseWithPackageurlJsAndCycloneDxIsStrictlyValid) {
  if (auto missing = npmCheckersMissing(); !missing.empty()) GTEST_SKIP() << "needs " << missing;
  std::string base = tempDir("sbom-npm");
  int n = 0, upstreams = 0, debs = 0;
  for (const auto& s : formatSubjects(base)) {
    std::string out = base + "/" + std::to_string(n++);
    for (const char* f : {"cyclonedx", "spdx", "json"}) {
      RunResult a = run(K + " audit --format " + f + " -o " + out + "." + f + " " + s);
      ASSERT_TRUE(a.code == 0 || a.code == 1) << s << " " << f << ": " << a.err;
    }
    RunResult v = validateCycloneDx(out + ".cyclonedx");
    EXPECT_EQ(v.code, 0) << s << ": " << v.out << v.err;
    RunResult p = checkPurls({out + ".cyclonedx", out + ".spdx"});
    EXPECT_EQ(p.code, 0) << s << ": " << p.out << p.err;
    json report = json::parse(readFile(out + ".json"));
    std::string distro = report["os"].value("id", "") + "-" + report["os"].value("version_id", "");
    std::istringstream lines(p.out);
    std::string line;
    int docs = 0;
    while (std::getline(lines, line)) {
      json doc = json::parse(line);
      ++docs;
      std::map<std::string, json> debByName;
      for (const auto& purl : doc["purls"])
        if (purl["type"] == "deb") debByName[purl["name"].get<std::string>()] = purl;
      for (const auto& pkg : report["os_packages"].value("packages", json::array())) {
        std::string name = pkg["name"], source = pkg.value("source", name);
        auto it = debByName.find(name);
        ASSERT_NE(it, debByName.end()) << s << ": no deb purl for " << name << " in " << doc["file"];
        const json& q = it->second["qualifiers"];
        ++debs;
        EXPECT_EQ(it->second["version"], pkg["version"]) << name;
        EXPECT_EQ(q.value("distro", ""), distro) << name;
        EXPECT_EQ(q.value("arch", ""), pkg["architecture"]) << name;
        if (source != name || pkg.contains("source_version")) {
          ++upstreams;
          EXPECT_EQ(q.value("upstream", "").substr(0, source.size()), source) << it->second["purl"];
        } else {
          EXPECT_FALSE(q.contains("upstream")) << it->second["purl"];
        }
      }
    }
    EXPECT_EQ(docs, 2) << p.out;
  }
  EXPECT_GT(debs, 0);
  EXPECT_GT(upstreams, 0);  // libfoo1 of the tree (and libc6 of glibc in the Debian root)
  // The checkers are not rubber stamps.
  json cdx = json::parse(readFile(base + "/0.cyclonedx"));
  cdx["components"][0]["purl"] = "pkg:deb/debian/x@1?arch=amd64";  // no distro
  cdx["unknownField"] = true;
  writeFile(base + "/bad.cyclonedx", cdx.dump());
  RunResult badPurl = checkPurls({base + "/bad.cyclonedx"});
  EXPECT_EQ(badPurl.code, 1);
  EXPECT_NE(badPurl.out.find("no distro qualifier"), std::string::npos) << badPurl.out;
  EXPECT_EQ(validateCycloneDx(base + "/bad.cyclonedx").code, 1);
  writeFile(base + "/junk.spdx",
            "{\"spdxVersion\": \"SPDX-2.3\", \"packages\": [{\"externalRefs\": "
            "[{\"referenceType\": \"purl\", \"referenceLocator\": \"not a purl\"}]}]}");
  EXPECT_EQ(checkPurls({base + "/junk.spdx"}).code, 1);
}

TEST(OutputFormats, PythonTargetsAuditExactlyThose) {
  std::string root = developerMachine();
  put(root, "opt/other/pyvenv.cfg", "version = 3.11.2\n");
  put(root, "opt/other/lib/python3.11/site-packages/six-1.16.0.dist-info/METADATA", "Name: six\nVersion: 1.16.0\n");
  int code = -1;
  json all = auditJson("dir:" + root, &code);
  EXPECT_EQ(all["python"]["environments"].size(), 2u);
  EXPECT_TRUE(all["python"]["not_searched"].is_array());
  json one = auditJson("--python /home/dev/src/app/.venv/bin/python dir:" + root, &code);
  ASSERT_EQ(one["python"]["environments"].size(), 1u);
  EXPECT_EQ(one["python"]["environments"][0]["prefix"], "/home/dev/src/app/.venv");
  EXPECT_EQ(one["python"]["targets"][0], "/home/dev/src/app/.venv/bin/python");
  json two = auditJson("--python /opt/other --python /home/dev/src/app/.venv dir:" + root, &code);
  EXPECT_EQ(two["python"]["environments"].size(), 2u);
  // Not an environment: the python step fails with the path named, exit 3.
  std::string err;
  json bad = auditJson("--python /etc dir:" + root, &code, &err);
  EXPECT_EQ(code, 3);
  EXPECT_NE(err.find("--python /etc: no Python environment there"), std::string::npos) << err;
  EXPECT_EQ(stepStatus(bad, "python"), "failed");
}

TEST(OutputFormats, HelpShowsUserOptionsAndUsageErrorsExit2) {
  // Every command and action of this binary, and every help form.
  for (const char* cmd : {"audit --help",
                          "audit -h",
                          "host --help",
                          "version --help",
                          "probe --help",
                          "help audit",
                          "--help",
                          "help",
                          "reference --help",
                          "reference init --help",
                          "reference show --help",
                          "reference verify --help",
                          "sample --help",
                          "sample check --help",
                          "dossier --help",
                          "dossier build --help",
                          "dossier verify --help",
                          "dossier replay --help",
                          "resume --help",
                          "resume check --help",
                          "resume inspect --help",
                          "diff --help",
                          "help reference",
                          "fleet --help",
                          "fleet plan --help",
                          "reports --help"}) {
    RunResult h = run(K + " " + cmd);
    EXPECT_EQ(h.code, 0) << cmd << ": " << h.err;
    EXPECT_NE(h.out.find("usage"), std::string::npos) << cmd;
    // audit's IMAGE is positional (hidden --image); dossier replay --run --image and probe --image are options.
    if (std::string(cmd).rfind("dossier ", 0) != 0 && std::string(cmd) != "probe --help") {
      EXPECT_EQ(h.out.find("  --image "), std::string::npos) << cmd;
    }
    EXPECT_EQ(h.out.find("  --outdir "), std::string::npos) << cmd;
    EXPECT_EQ(h.out.find("  --a "), std::string::npos) << cmd;
    // Issue 51 §3: one help style, the gate's ("--fail-on LEVEL", "-o, --output FILE"), not
    // Boost's ("--fail-on arg", "-o [ --output ] arg").
    EXPECT_EQ(h.out.find(" arg "), std::string::npos) << cmd << ":\n" << h.out;
    EXPECT_EQ(h.out.find(" [ --"), std::string::npos) << cmd << ":\n" << h.out;
  }
  EXPECT_NE(run(K + " audit --help").out.find("  --fail-on LEVEL "), std::string::npos);
  EXPECT_NE(run(K + " audit --help").out.find("  -o, --output FILE "), std::string::npos);
  // Exit-code text naming --fail-on only where the command has --fail-on.
  for (const char* cmd : {"audit --help", "sample --help", "sample check --help", "diff --help"})
    EXPECT_NE(run(K + " " + cmd).out.find("exit codes: 0 ok; 1 findings at or above --fail-on"), std::string::npos)
        << cmd;
  for (const char* cmd : {"reference --help", "reference init --help", "dossier --help", "dossier replay --help",
                          "resume inspect --help", "resume --help"}) {
    std::string out = run(K + " " + cmd).out;
    EXPECT_NE(out.find("exit codes: 0 ok; 1 an error finding"), std::string::npos) << cmd << ":\n" << out;
    EXPECT_EQ(out.find("--fail-on"), std::string::npos) << cmd << ":\n" << out;
  }
  for (const char* cmd : {"host --help", "version --help", "completion --help"})
    EXPECT_NE(run(K + " " + cmd).out.find("exit codes: 0 ok; 2 usage error"), std::string::npos) << cmd;
  EXPECT_NE(run(K + " --help").out.find("exit codes: 0 ok; 1 findings (at or above --fail-on where"), std::string::npos);
  EXPECT_NE(run(K + " audit --help").out.find("--format"), std::string::npos);
  struct Case {
    const char* args;
    const char* says;
  } cases[] = {
      {"", "usage: kernodeck COMMAND"},
      {"audti oci:/x", "did you mean 'audit'"},
      {"audit", "an IMAGE is required"},
      {"audit --bogus oci:/x", "unrecognised option '--bogus'"},
      {"audit --fromat json oci:/x", "unrecognised option '--fromat', did you mean '--format'?"},
      {"fleet plan --shrads 3", "did you mean '--shards'?"},
      {"audit --format xml oci:/x", "--format takes text, json, sarif, cyclonedx, spdx, html or markdown, not 'xml'"},
      {"audit --json --format sarif oci:/x", "contradict"},
      {"audit --fail-on fatal oci:/x", "--fail-on takes"},
      {"host --bogus", "unrecognised option"},
      {"version --bogus", "unexpected argument '--bogus'"},
      {"probe --bogus", "--bogus"},
      {"reference bogus", "unknown action 'bogus'"},
      {"reference init --bogus", "unrecognised option '--bogus'"},
      {"sample check", "an output folder is required"},
      {"dossier build --bogus", "unrecognised option '--bogus'"},
      {"dossier replay", "a folder is required"},
      {"resume inspect", "a checkpoint file is required"},
      {"diff a.json", "two files are required"},
      {"fleet plan --bogus", "unrecognised option '--bogus'"},
      {"reports", "one IMAGE is required"},
  };
  for (const auto& c : cases) {
    RunResult r = run(K + " " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

// Every command the README shows in a shell block names a binary of the default build and a
// command (and action) that answers --help.
TEST(OutputFormats, ReadmeCommandsExistInTheDefaultBuild) {
  std::string readme = readFile(std::string(SOURCE_DIR) + "/README.md");
  std::string binDir = fs::path(K).parent_path().string();
  bool inShell = false;
  int checked = 0;
  size_t pos = 0;
  while (pos < readme.size()) {
    size_t end = readme.find('\n', pos);
    if (end == std::string::npos) end = readme.size();
    std::string line = readme.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("```", 0) == 0) {
      inShell = !inShell && line == "```sh";
      continue;
    }
    if (!inShell || line.rfind("kernodeck", 0) != 0) continue;
    std::istringstream words(line);
    std::string bin, w, cmd;
    words >> bin;
    EXPECT_TRUE(fs::exists(binDir + "/" + bin)) << bin << " (README: " << line << ") is not built by default";
    if (bin != "kernodeck") continue;
    for (int i = 0; i < 2 && words >> w && w.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos; ++i)
      cmd += " " + w;
    RunResult h = run(K + cmd + " --help");
    EXPECT_EQ(h.code, 0) << "kernodeck" << cmd << " --help (README: " << line << "): " << h.err;
    ++checked;
  }
  EXPECT_GT(checked, 15);
}

// diff of two audits of the same machine, before and after a python3.11 upgrade and a repair
// of nodejs: the drift comes first, the 300 gone findings are one line.
TEST(OutputFormats, DiffOfTwoAuditsSummaryFirst) {
  std::string root = developerMachine();
  std::string base = tempDir("diff");
  std::string status = readFile(root + "/var/lib/dpkg/status");
  writeFile(root + "/var/lib/dpkg/status",
            status +
                "Package: python3.11\nStatus: install ok installed\nArchitecture: amd64\n"
                "Version: 3.11.2-6\n\n");
  ASSERT_EQ(run(K + " audit --json -o " + base + "/a.json dir:" + root).code, 1);
  writeFile(root + "/var/lib/dpkg/status",
            status +
                "Package: python3.11\nStatus: install ok installed\nArchitecture: amd64\n"
                "Version: 3.11.2-6+deb12u1\n\n");
  writeFile(root + "/var/lib/dpkg/info/nodejs.md5sums", "");
  ASSERT_EQ(run(K + " audit --json -o " + base + "/b.json dir:" + root).code, 0);
  RunResult d = run(K + " diff " + base + "/a.json " + base + "/b.json");
  EXPECT_EQ(d.code, 1) << d.err;
  size_t summary = d.out.find("packages  0 added, 0 removed, 1 changed");
  ASSERT_NE(summary, std::string::npos) << d.out;
  EXPECT_NE(d.out.find("drift     0 findings new in B, 300 gone from A"), std::string::npos) << d.out;
  EXPECT_GT(d.out.find("python3.11:amd64 (dpkg) is 3.11.2-6 in A and 3.11.2-6+deb12u1 in B"), summary) << d.out;
  EXPECT_LE(lines(d.out), 25u) << d.out;
  json j = json::parse(run(K + " diff --json " + base + "/a.json " + base + "/b.json").out);
  EXPECT_EQ(j["diff"]["findings_gone"], 300);
  EXPECT_EQ(run(K + " diff " + base + "/a.json " + base + "/a.json").code, 0);
  writeFile(base + "/junk.json", "not json");
  EXPECT_EQ(run(K + " diff " + base + "/a.json " + base + "/junk.json").code, 2);
}

}  // namespace integration_output_formats_test
