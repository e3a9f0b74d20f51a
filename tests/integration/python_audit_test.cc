// The Python and OS-package audit against real tools: a differential test with
// pip's own `pip check`, and a debootstrap-built Debian image with Python and a
// venv (real RECORD files, a real dpkg database), tampered in a second layer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <tuple>

#include "support.h"

namespace integration_python_audit_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

std::string canon(std::string s) {
  std::string out;
  for (char c : s)
    out.push_back(c == '_' || c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

void distInfo(const std::string& site, const std::string& name, const std::string& version,
              const std::vector<std::string>& reqs) {
  std::string dir = site + "/" + name + "-" + version + ".dist-info";
  run("mkdir -p '" + dir + "'");
  std::string meta = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n";
  for (const auto& r : reqs) meta += "Requires-Dist: " + r + "\n";
  writeFile(dir + "/METADATA", meta);
  writeFile(dir + "/INSTALLER", "pip\n");
}

using Verdict = std::tuple<std::string, std::string, std::string>;  // (kind, package, dependency)

std::set<Verdict> pipVerdicts(const std::string& out) {
  std::set<Verdict> v;
  static const std::regex missing(R"(^(\S+) (\S+) requires (\S+), which is not installed\.$)");
  static const std::regex conflict(R"(^(\S+) (\S+) has requirement ([A-Za-z0-9._-]+).*, but you have .*$)");
  for (const auto& line : std::vector<std::string>([&] {
         std::vector<std::string> ls;
         size_t s = 0, e;
         while ((e = out.find('\n', s)) != std::string::npos) ls.push_back(out.substr(s, e - s)), s = e + 1;
         return ls;
       }())) {
    std::smatch m;
    if (std::regex_match(line, m, missing)) {
      v.insert({"missing", canon(m[1]), canon(m[3])});
    } else if (std::regex_match(line, m, conflict)) {
      v.insert({"conflict", canon(m[1]), canon(m[3])});
    }
  }
  return v;
}

std::set<Verdict> kernodeckVerdicts(const json& report, const std::string& envPrefix) {
  std::set<Verdict> v;
  static const std::regex name(R"(^\s*([A-Za-z0-9._-]+))");
  for (const auto& f : report["findings"]) {
    std::string code = f["code"];
    if (code != "python.requirement.missing" && code != "python.requirement.conflict") continue;
    if (f.value("environment", "") != envPrefix) continue;
    std::string req = f["requirement"];
    std::smatch m;
    std::regex_search(req, m, name);
    v.insert({code == "python.requirement.missing" ? "missing" : "conflict", canon(f["package"]), canon(m[1])});
  }
  return v;
}

}  // namespace

TEST(PythonAudit, VerdictsEqualRealPipCheck) {
  if (run("/usr/bin/python3 -c 'import ensurepip'").code != 0) GTEST_SKIP() << "python3-venv is not installed";
  std::string base = tempDir("pipcheck");
  std::string V = base + "/venv";
  ASSERT_EQ(run("/usr/bin/python3 -m venv " + V).code, 0);
  std::string site = run("ls -d " + V + "/lib/python3*/site-packages").out;
  site.erase(site.find_last_not_of("\n") + 1);
  distInfo(site, "alpha", "1.0", {"beta>=2.0"});
  distInfo(site, "beta", "1.0", {});
  distInfo(site, "gamma", "1.0", {"delta"});
  distInfo(site, "eps", "1.0", {"zeta; python_version < \"3\""});
  distInfo(site, "eta", "1.0", {"theta>=1.0"});
  distInfo(site, "theta", "2.0rc1", {});
  distInfo(site, "iota", "1.0", {"kappa; extra == \"x\""});
  distInfo(site, "lam", "1.0", {"mu~=1.4.2"});
  distInfo(site, "mu", "1.5.0", {});
  distInfo(site, "nu", "1.0", {"xi!=1.0.*"});
  distInfo(site, "xi", "1.0.3", {});
  distInfo(site, "omicron", "1.0", {"pi==1.0"});
  distInfo(site, "pi", "1.0+cu121", {});
  distInfo(site, "upsilon", "1.0", {"Phi_Chi[extra]>=1.0 ; python_version >= \"3.8\""});
  distInfo(site, "omega", "1.0", {"ALPHA", "os-only; os_name == \"nt\""});
  distInfo(site, "psi", "1.0", {"beta (<0.5)"});
  run("mkdir -p " + site + "/rho.egg-info");
  writeFile(site + "/rho.egg-info/PKG-INFO", "Metadata-Version: 1.1\nName: rho\nVersion: 1.0\n");
  writeFile(site + "/rho.egg-info/requires.txt", "sigma>=3\n\n[test]\ntau\n");
  distInfo(site, "sigma", "2.0", {});
  RunResult pip = run(V + "/bin/python -m pip check --no-color");
  ASSERT_NE(pip.code, 0) << "pip check found nothing: " << pip.out;
  std::set<Verdict> want = pipVerdicts(pip.out);
  ASSERT_GE(want.size(), 7u) << pip.out;
  int code = -1;
  json r = auditJson("dir:" + V, &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 1);
  std::set<Verdict> got = kernodeckVerdicts(r, "/");
  EXPECT_EQ(got, want) << "pip check said:\n" << pip.out;
}

TEST(PythonAudit, DebootstrapImageTamperedInASecondLayer) {
  if (::geteuid() != 0 || !haveTool("umoci") || !haveTool("debootstrap"))
    GTEST_SKIP() << "needs root, umoci, debootstrap";
  RunResult fx = run(std::string(SOURCE_DIR) + "/tests/fixtures/debootstrap-python");
  ASSERT_EQ(fx.code, 0) << fx.err;
  std::string rootfs = fx.out.substr(0, fx.out.find('\n'));
  std::string base = tempDir("deboot");
  std::string L = base + "/L", B = base + "/B";
  // Layer 1: the untouched system.
  RunResult b = run("set -e; umoci init --layout " + L + "; umoci new --image " + L + ":base; umoci unpack --image " +
                    L + ":base " + B + " >/dev/null; cp -a " + rootfs + "/. " + B + "/rootfs/; rm -f " + B +
                    "/rootfs/.complete; umoci repack --image " + L + ":base " + B + "; umoci config --image " + L +
                    ":base --config.env PYTHON_VERSION=3.11.2");
  ASSERT_EQ(b.code, 0) << b.err;
  int code = -1;
  json clean = auditJson("oci:" + L + ":base --fail-on warning", &code);
  ASSERT_TRUE(clean.is_object());
  for (const auto& f : clean["findings"]) {
    if (f["code"] != "image.tag.mutable") {
      EXPECT_EQ(f["severity"], "info") << f.dump();
    }
  }
  EXPECT_EQ(clean["os"]["id"], "debian");
  EXPECT_GT(clean["os_packages"]["count"].get<int>(), 50);
  bool venvSeen = false;
  for (const auto& e : clean["python"]["environments"])
    if (e["prefix"] == "/opt/venv") {
      venvSeen = true;
      EXPECT_GT(e["record_files_checked"].get<int>(), 100);
    }
  EXPECT_TRUE(venvSeen);
  // Layer 2: tamper a pip-installed file, delete one, tamper a dpkg-owned file, leak a credential.
  std::string R = B + "/rootfs";
  std::string site = R + "/opt/venv/lib/python3.11/site-packages";
  RunResult t = run(
      "set -e; umoci unpack --image " + L + ":base " + base + "/B2 >/dev/null; R2=" + base +
      "/B2/rootfs; "
      "echo '# tampered' >> $R2/opt/venv/lib/python3.11/site-packages/pip/__init__.py; "
      "rm $R2/opt/venv/lib/python3.11/site-packages/setuptools/version.py; "
      "echo tampered >> $R2/usr/bin/dpkg-query; "
      "printf '[global]\\nindex-url = https://builder:s3cr3tP4ss@pypi.internal.example/simple\\n' > $R2/etc/pip.conf; "
      "umoci repack --image " +
      L + ":base " + base + "/B2");
  ASSERT_EQ(t.code, 0) << t.err;
  RunResult raw = run(K + " audit --json oci:" + L + ":base");
  EXPECT_EQ(raw.out.find("s3cr3tP4ss"), std::string::npos);
  EXPECT_EQ(raw.err.find("s3cr3tP4ss"), std::string::npos);
  json r = json::parse(raw.out);
  EXPECT_EQ(raw.code, 1);
  auto find = [&](const std::string& code, const std::string& pathPart) -> const json* {
    for (const auto& f : r["findings"])
      if (f["code"] == code && f.value("path", "").find(pathPart) != std::string::npos) return &f;
    return nullptr;
  };
  const json* mod = find("python.record.modified", "site-packages/pip/__init__.py");
  ASSERT_TRUE(mod) << r["findings"].dump(1);
  EXPECT_EQ((*mod)["severity"], "error");
  EXPECT_EQ((*mod)["layer"], "1");  // the layer that last changed it
  const json* missing = find("python.record.missing", "setuptools/version.py");
  ASSERT_TRUE(missing);
  EXPECT_EQ((*missing)["severity"], "warning");
  const json* dpkg = find("os.package.modified", "/usr/bin/dpkg-query");
  ASSERT_TRUE(dpkg);
  EXPECT_EQ((*dpkg)["package"], "dpkg");
  ASSERT_TRUE(find("secret.leak", "/etc/pip.conf"));
  // Nothing else above info.
  std::set<std::string> expected = {"python.record.modified", "python.record.missing", "os.package.modified",
                                    "secret.leak", "image.tag.mutable"};
  for (const auto& f : r["findings"]) {
    if (f["severity"] != "info") {
      EXPECT_TRUE(expected.count(f["code"])) << f.dump();
    }
  }
}

TEST(PythonAudit, PinsTorchBuildAndExpectation) {
  // A synthetic image: torch +cu121 with a cu11 runtime wheel, pinned requirements that disagree,
  // a leaked index URL and a build-path direct_url.
  auto dist = [](const std::string& site, const std::string& name, const std::string& ver,
                 const std::string& extra = "") {
    std::string d = site + "/" + name + "-" + ver + ".dist-info/";
    return json::array({{{"path", d + "METADATA"},
                         {"content", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + ver + "\n" + extra}},
                        {{"path", d + "INSTALLER"}, {"content", "pip\n"}}});
  };
  std::string site = "usr/local/lib/python3.11/site-packages";
  json entries = json::array(
      {{{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
       {{"path", site + "/torch/version.py"},
        {"content", "__version__ = '2.1.0+cu121'\ncuda = '12.1'\nhip = None\ngit_version = 'x'\n"}},
       {{"path", "app/requirements.txt"},
        {"content", "--extra-index-url https://ci:tok3nValue@artifacts.example/simple\ntorch==2.1.0\nnumpy==1.26.0\n"}},
       {{"path", site + "/mypkg-0.1.dist-info/direct_url.json"},
        {"content", R"({"url":"file:///home/builder/src/mypkg","dir_info":{}})"}}});
  for (const auto& e : dist(site, "torch", "2.1.0+cu121")) entries.push_back(e);
  for (const auto& e : dist(site, "nvidia-cuda-runtime-cu11", "11.8.89")) entries.push_back(e);
  for (const auto& e : dist(site, "numpy", "1.24.4")) entries.push_back(e);
  for (const auto& e : dist(site, "mypkg", "0.1")) entries.push_back(e);
  json spec = {{"config", {{"Env", {"PYTHON_VERSION=3.11.7", "CUDA_VERSION=12.1.1"}}}},
               {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
  std::string base = tempDir("torch");
  ASSERT_FALSE(mkimage(spec, base + "/img").empty());
  RunResult raw = run(K + " audit --json --expect-out " + base + "/expect.json oci:" + base + "/img");
  EXPECT_EQ(raw.out.find("tok3nValue"), std::string::npos);
  json r = json::parse(raw.out);
  EXPECT_EQ(raw.code, 1);
  EXPECT_EQ(countFindings(r, "python.torch.inconsistent"), 1) << r["findings"].dump(1);
  EXPECT_EQ(countFindings(r, "python.pin.mismatch"), 1);     // numpy
  EXPECT_EQ(countFindings(r, "python.pin.local_label"), 1);  // torch==2.1.0 vs +cu121
  EXPECT_EQ(countFindings(r, "secret.leak"), 1);
  EXPECT_EQ(countFindings(r, "python.path.leak"), 1);
  EXPECT_EQ(countFindings(r, "python.torch.index"), 1);
  json e = json::parse(readFile(base + "/expect.json"));
  EXPECT_EQ(e["schema"], "kernodeck.expect/v1");
  EXPECT_EQ(e["torch"]["cuda"], "12.1");
  EXPECT_EQ(e["accelerator"], "cuda");
  EXPECT_EQ(e["nvidia"]["require"][0], "cuda>=12.1");
  EXPECT_EQ(e["image"]["digest"], r["subject"]["manifest_digest"]);
}

// The layer walk hashes by where a file is (MD5 where dpkg may own it, SHA-256 where a RECORD
// may list it); a package database that asks for a hash the walk left out gets it from one
// more read of that layer. Here dpkg owns a file under /usr/local/lib/python3.11 and a pip
// RECORD lists files in /usr/bin, one a hardlink: all are still verified.
TEST(PythonAudit, HashesTheWalkLeftOutAreReadWhenAsked) {
  std::string site = "usr/local/lib/python3.11/site-packages";
  std::string dist = site + "/foo-1.0.dist-info";
  json base = json::array({
      {{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
      {{"path", "var/lib/dpkg/status"},
       {"content", "Package: oddlib\nStatus: install ok installed\nVersion: 1.0\nArchitecture: amd64\n\n"}},
      {{"path", "var/lib/dpkg/info/oddlib.list"}, {"content", "/usr/local/lib/python3.11/odd.py\n"}},
      {{"path", "var/lib/dpkg/info/oddlib.md5sums"},
       {"content", "05769fb4b6a5473356b8a84df122aeba  usr/local/lib/python3.11/odd.py\n"}},
      {{"path", "usr/local/lib/python3.11/odd.py"}, {"content", "orig\n"}},
      {{"path", dist + "/METADATA"}, {"content", "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n"}},
      {{"path", dist + "/INSTALLER"}, {"content", "pip\n"}},
      {{"path", dist + "/RECORD"},
       {"content",
        "../../../../bin/foo-tool,sha256=hBn_E4l8vjclmq_N-ZyqVFMrgmRFk1vg_LcUVlJevCY,8\n"
        "../../../../bin/foo-link,sha256=hBn_E4l8vjclmq_N-ZyqVFMrgmRFk1vg_LcUVlJevCY,8\n"
        "foo-1.0.dist-info/RECORD,,\n"}},
      {{"path", "usr/bin/foo-tool"}, {"content", "tool v1\n"}},
      {{"path", "usr/bin/foo-link"}, {"type", "hardlink"}, {"target", "usr/bin/foo-tool"}},
  });
  auto audit = [](const json& layers) {
    json spec = {{"layers", layers}};
    std::string dir = tempDir("hash-policy");
    EXPECT_FALSE(mkimage(spec, dir + "/img").empty());
    RunResult r = run(K + " audit --json --fail-on none oci:" + dir + "/img");
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  };
  // Untouched: every file verified, nothing modified.
  json clean = audit(json::array({{{"compression", "gzip"}, {"entries", base}}}));
  EXPECT_EQ(clean["os_packages"]["files_verified"], 1);
  EXPECT_EQ(countFindings(clean, "os.package.modified"), 0) << clean["findings"].dump(1);
  EXPECT_EQ(countFindings(clean, "python.record.modified"), 0) << clean["findings"].dump(1);
  // A second layer rewrites the dpkg-owned file and the tool (the hardlink keeps the old bytes).
  json tampered =
      json::array({{{"compression", "zstd"}, {"entries", base}},
                   {{"compression", "gzip"},
                    {"entries", json::array({{{"path", "usr/local/lib/python3.11/odd.py"}, {"content", "evil\n"}},
                                             {{"path", "usr/bin/foo-tool"}, {"content", "tool v2\n"}}})}}});
  json r = audit(tampered);
  ASSERT_EQ(countFindings(r, "os.package.modified"), 1) << r["findings"].dump(1);
  ASSERT_EQ(countFindings(r, "python.record.modified"), 1) << r["findings"].dump(1);
  for (const auto& f : r["findings"]) {
    if (f["code"] == "os.package.modified") {
      EXPECT_EQ(f["path"], "/usr/local/lib/python3.11/odd.py");
    }
    if (f["code"] == "python.record.modified") {
      EXPECT_EQ(f["path"], "/usr/bin/foo-tool");
      EXPECT_EQ(f["severity"], "error");
    }
  }
}

// The attack on the RECORD check: whoever builds the image replaces a file a RECORD lists with a
// symlink to other bytes. A link has no hash of its own, so the check used to count the row as
// checked and compare nothing: the audit passed with exit 0 while Python would import
// /opt/evil.py. The row is now judged by what the link points to, as Python reads it: other bytes
// are a modification (error), the same bytes pass, a dangling link is a missing file. The
// target in dpkg's territory (usr/share) is one the walk hashed with MD5 only, so its SHA-256 is
// read in the extra pass (prepareHashes) before the comparison.
TEST(PythonAudit, AListedFileReplacedByASymlinkIsJudgedByWhatItPointsTo) {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  json base = json::array({
      {{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
      {{"path", site + "/pkg-1.0.dist-info/METADATA"}, {"content", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"}},
      {{"path", site + "/pkg-1.0.dist-info/INSTALLER"}, {"content", "pip\n"}},
      {{"path", site + "/pkg-1.0.dist-info/RECORD"},
       {"content",
        "pkg/a.py,sha256=h0KPxSKAPTEGXnvOPPA_5HUJZjHl4Hu9eg_eYMTPJcc,2\n"
        "pkg/b.py,sha256=AmOCmYm2_ZVPcrqvL8ZLwuLwHWktTecphuqAj26ZgT8,2\n"
        "pkg-1.0.dist-info/RECORD,,\n"}},
      {{"path", site + "/pkg/a.py"}, {"content", "a\n"}},
      {{"path", site + "/pkg/b.py"}, {"content", "b\n"}},
  });
  auto audit = [&](const json& second, int expectCode) {
    json spec = {{"layers", json::array({{{"compression", "gzip"}, {"entries", base}},
                                         {{"compression", "gzip"}, {"entries", second}}})}};
    std::string dir = tempDir("record-symlink");
    EXPECT_FALSE(mkimage(spec, dir + "/img").empty());
    RunResult r = run(K + " audit --json oci:" + dir + "/img");
    EXPECT_EQ(r.code, expectCode) << r.err << r.out;
    return json::parse(r.out, nullptr, false);
  };
  auto link = [&](const std::string& file, const std::string& target) {
    return json{{"path", site + "/pkg/" + file}, {"type", "symlink"}, {"target", target}};
  };
  auto findingsAt = [](const json& r, const std::string& code, const std::string& path) {
    int n = 0;
    for (const auto& f : r["findings"]) n += f["code"] == code && f.value("path", "") == path;
    return n;
  };
  const std::string a = "/" + site + "/pkg/a.py", b = "/" + site + "/pkg/b.py";
  // Other bytes, in a site-packages-free place and in dpkg's territory (hashed MD5-only by the walk).
  json evil = audit(json::array({{{"path", "opt/evil.py"}, {"content", "import os; os.system('id')\n"}},
                                 {{"path", "usr/share/evil.py"}, {"content", "import os\n"}},
                                 link("a.py", "/opt/evil.py"),
                                 link("b.py", "../../../../../share/evil.py")}),
                    1);
  EXPECT_EQ(findingsAt(evil, "python.record.modified", a), 1) << evil["findings"].dump(1);
  EXPECT_EQ(findingsAt(evil, "python.record.modified", b), 1) << evil["findings"].dump(1);
  // The same bytes behind the link: nothing to report.
  json same = audit(json::array({{{"path", "opt/same.py"}, {"content", "a\n"}}, link("a.py", "/opt/same.py")}), 0);
  EXPECT_EQ(countFindings(same, "python.record.modified"), 0) << same["findings"].dump(1);
  EXPECT_EQ(countFindings(same, "python.record.missing"), 0) << same["findings"].dump(1);
  // A dangling link: the listed file is missing.
  json dangling = audit(json::array({link("a.py", "/opt/nothing.py")}), 0);
  EXPECT_EQ(findingsAt(dangling, "python.record.missing", a), 1) << dangling["findings"].dump(1);
  EXPECT_EQ(countFindings(dangling, "python.record.modified"), 0) << dangling["findings"].dump(1);
}

}  // namespace integration_python_audit_test
