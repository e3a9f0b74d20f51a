// The image families beyond Debian, made with the real tools: RPM systems (packages built with
// rpmbuild and installed with `rpm --root` by Debian's rpm 4.18, in its sqlite database as on
// UBI 9 and converted to the Berkeley DB `Packages` of RHEL 8 with db5.3_load) and Alpine (an
// apk database whose checksums are those of the files written). Each is audited clean, then
// tampered: every modified owned file is reported once, with its package and layer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>

#include "kernodeck/util/hash.h"
#include "npm_checkers.h"
#include "support.h"

namespace integration_os_families_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

std::string recordHash(const std::string& content) {
  kernodeck::util::Hasher h("sha256");
  h.update(content);
  return "sha256=" + kernodeck::util::base64UrlNoPad(h.raw());
}

// Builds the two test packages with rpmbuild into DIR/RPMS/noarch and returns that directory.
// "demo" ships a program, a symlink, a configuration file and documentation; "python3-demo"
// ships a Python distribution (with RECORD) and a stand-in interpreter, as RHEL's python3-*
// packages do, so RECORD and rpm divide authority over its files.
std::string buildRpms(const std::string& dir) {
  std::string init = "x = 1\n", meta = "Metadata-Version: 2.1\nName: demo-py\nVersion: 1.0\n";
  std::string site = "/usr/lib/python3.9/site-packages";
  run("mkdir -p '" + dir + "'");
  writeFile(dir + "/demo.spec",
            "Name: demo\nVersion: 1.2\nRelease: 3.el9\nSummary: demo\nLicense: MIT\nBuildArch: noarch\n"
            "%description\ndemo\n%install\n"
            "mkdir -p %{buildroot}/usr/bin %{buildroot}/etc %{buildroot}/usr/share/doc/demo\n"
            "printf '#!/bin/sh\\necho hi\\n' > %{buildroot}/usr/bin/demo\nchmod 755 %{buildroot}/usr/bin/demo\n"
            "ln -s demo %{buildroot}/usr/bin/demo-link\necho conf=1 > %{buildroot}/etc/demo.conf\n"
            "echo doc > %{buildroot}/usr/share/doc/demo/README\n"
            "%files\n/usr/bin/demo\n/usr/bin/demo-link\n%config(noreplace) /etc/demo.conf\n%doc "
            "/usr/share/doc/demo/README\n");
  writeFile(dir + "/pydemo.spec",
            "Name: python3-demo\nVersion: 1.0\nRelease: 1.el9\nSummary: demo\nLicense: MIT\nBuildArch: noarch\n"
            "%description\ndemo\n%install\n"
            "mkdir -p %{buildroot}" +
                site + "/demo_py %{buildroot}" + site +
                "/demo_py-1.0.dist-info %{buildroot}/usr/bin\n"
                "printf '#!/bin/sh\\n' > %{buildroot}/usr/bin/python3.9\nchmod 755 %{buildroot}/usr/bin/python3.9\n"
                "printf 'x = 1\\n' > %{buildroot}" +
                site +
                "/demo_py/__init__.py\n"
                "printf 'Metadata-Version: 2.1\\nName: demo-py\\nVersion: 1.0\\n' > %{buildroot}" +
                site +
                "/demo_py-1.0.dist-info/METADATA\n"
                "printf 'rpm\\n' > %{buildroot}" +
                site +
                "/demo_py-1.0.dist-info/INSTALLER\n"
                "printf 'demo_py/__init__.py," +
                recordHash(init) + "," + std::to_string(init.size()) +
                "\\n"
                "demo_py-1.0.dist-info/METADATA," +
                recordHash(meta) + "," + std::to_string(meta.size()) +
                "\\n"
                "demo_py-1.0.dist-info/RECORD,,\\n' > %{buildroot}" +
                site +
                "/demo_py-1.0.dist-info/RECORD\n"
                "%files\n/usr/bin/python3.9\n" +
                site + "/demo_py\n" + site + "/demo_py-1.0.dist-info\n");
  for (const char* spec : {"demo.spec", "pydemo.spec"}) {
    RunResult r = run("rpmbuild --define '_topdir " + dir +
                      "' --define '_build_id_links none' --define '__os_install_post %{nil}' -bb " + dir + "/" + spec);
    EXPECT_EQ(r.code, 0) << r.err;
  }
  return dir + "/RPMS/noarch";
}

// Installs the packages into ROOT's rpm database (sqlite, at /var/lib/rpm) as UBI 9 has it;
// documentation left out as UBI's tsflags=nodocs does.
void rpmInstall(const std::string& rpms, const std::string& root) {
  RunResult r =
      run("rpm --root '" + root + "' --dbpath /var/lib/rpm -i --nodeps --excludedocs " + rpms + "/*.rpm 2>&1");
  ASSERT_EQ(r.code, 0) << r.out;
  writeFile(root + "/etc/os-release", "NAME=\"Red Hat Enterprise Linux\"\nID=\"rhel\"\nVERSION_ID=\"9.4\"\n");
}

std::vector<json> above(const json& report, const std::string& severityBelow,
                        const std::set<std::string>& ignore = {}) {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["severity"] != severityBelow && !ignore.count(f["code"])) out.push_back(f);
  return out;
}

const json* findOne(const json& r, const std::string& code, const std::string& path, int* count) {
  const json* hit = nullptr;
  *count = 0;
  for (const auto& f : r["findings"])
    if (f["code"] == code && f.value("path", "") == path) hit = &f, ++*count;
  return hit;
}

// The one os.package.modified finding for PATH, which must name PACKAGE; null when there is none.
const json* modifiedOnce(const json& r, const std::string& path, const std::string& package) {
  int n = 0;
  const json* f = findOne(r, "os.package.modified", path, &n);
  EXPECT_EQ(n, 1) << path << ": " << r["findings"].dump(1);
  if (f) {
    EXPECT_EQ((*f)["package"], package) << path;
  }
  return f;
}

// The SBOMs of SUBJECT checked by packageurl-js and the CycloneDX library's strict validator
// (npm_checkers.h); the purls packageurl-js read from the CycloneDX document, by package name.
std::map<std::string, json> sbomPurls(const std::string& subject, const std::string& dir) {
  std::map<std::string, json> out;
  if (!npmCheckersMissing().empty()) return out;
  for (const char* f : {"cyclonedx", "spdx"}) {
    RunResult a = run(K + " audit --format " + f + " -o " + dir + "/sbom." + f + " " + subject);
    EXPECT_TRUE(a.code == 0 || a.code == 1) << a.err;
  }
  RunResult v = validateCycloneDx(dir + "/sbom.cyclonedx");
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  RunResult p = checkPurls({dir + "/sbom.cyclonedx", dir + "/sbom.spdx"});
  EXPECT_EQ(p.code, 0) << p.out << p.err;
  json doc = json::parse(p.out.substr(0, p.out.find('\n')), nullptr, false);
  if (doc.is_object())
    for (const auto& purl : doc["purls"]) out[purl["name"].get<std::string>()] = purl;
  return out;
}

bool rpmTools() { return ::geteuid() == 0 && haveTool("rpmbuild") && haveTool("rpm"); }

}  // namespace

// UBI 9-like: the sqlite rpm database, in an image of two layers; the second tampers.
TEST(OsFamilies, RpmSqliteImageTamperedInASecondLayer) {
  if (!rpmTools() || !haveTool("umoci")) GTEST_SKIP() << "needs root, rpmbuild, rpm and umoci";
  std::string base = tempDir("rpm9");
  std::string rpms = buildRpms(base + "/build");
  std::string L = base + "/L", B = base + "/B";
  RunResult b = run("set -e; umoci init --layout " + L + "; umoci new --image " + L + ":base; umoci unpack --image " +
                    L + ":base " + B + " >/dev/null");
  ASSERT_EQ(b.code, 0) << b.err;
  rpmInstall(rpms, B + "/rootfs");
  ASSERT_EQ(run("umoci repack --image " + L + ":base " + B).code, 0);
  int code = -1;
  json clean = auditJson("oci:" + L + ":base", &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(above(clean, "info", {"image.tag.mutable"}).empty()) << clean["findings"].dump(1);
  const json& os = clean["os_packages"];
  EXPECT_EQ(os["manager"], "rpm");
  EXPECT_EQ(os["format"], "sqlite");
  EXPECT_EQ(os["location"], "/var/lib/rpm");
  ASSERT_EQ(os["count"], 2) << os.dump(1);
  std::set<std::string> names;
  for (const auto& p : os["packages"])
    names.insert(p["name"].get<std::string>() + " " + p["version"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"demo 1.2-3.el9", "python3-demo 1.0-1.el9"}));
  // The SBOMs name them as rpm purls of the release os-release names, read by packageurl-js.
  if (npmCheckersMissing().empty()) {
    auto purls = sbomPurls("oci:" + L + ":base", base);
    ASSERT_TRUE(purls.count("demo")) << json(purls).dump();
    EXPECT_EQ(purls["demo"]["purl"], "pkg:rpm/redhat/demo@1.2-3.el9?arch=noarch&distro=rhel-9.4");
    EXPECT_EQ(purls["python3-demo"]["qualifiers"]["distro"], "rhel-9.4");
    // The package's own digests from its rpm header.
    std::string header;
    json cdx = json::parse(readFile(base + "/sbom.cyclonedx"));
    for (const auto& c : cdx["components"])
      if (c["name"] == "demo")
        for (const auto& p : c["properties"])
          if (p["name"] == "kernodeck:rpm:sha256header") header = p["value"];
    EXPECT_EQ(header.size(), 64u);
  }
  // Every installed file verified; the documentation (not installed) is not reported missing.
  EXPECT_GE(os["files_verified"].get<int>(), 8);
  EXPECT_EQ(os["missing"], 0);
  // Layer 2: a program, a symlink, a configuration file and an rpm-owned Python file changed.
  std::string site = "usr/lib/python3.9/site-packages";
  RunResult t =
      run("set -e; umoci unpack --image " + L + ":base " + base + "/B2 >/dev/null; R=" + base +
          "/B2/rootfs; "
          "echo tampered >> $R/usr/bin/demo; ln -sfn /bin/sh $R/usr/bin/demo-link; echo conf=2 > $R/etc/demo.conf; "
          "echo 'x = 2' > $R/" +
          site + "/demo_py/__init__.py; umoci repack --image " + L + ":base " + base + "/B2");
  ASSERT_EQ(t.code, 0) << t.err;
  json r = auditJson("oci:" + L + ":base", &code);
  EXPECT_EQ(code, 1);
  int n = 0;
  const json* prog = findOne(r, "os.package.modified", "/usr/bin/demo", &n);
  ASSERT_TRUE(prog) << r["findings"].dump(1);
  EXPECT_EQ(n, 1);
  EXPECT_EQ((*prog)["package"], "demo");
  EXPECT_EQ((*prog)["layer"], "1");
  EXPECT_EQ((*prog)["severity"], "error");
  EXPECT_EQ((*prog)["verify"], "S.5.");
  const json* link = findOne(r, "os.package.modified", "/usr/bin/demo-link", &n);
  ASSERT_TRUE(link);
  EXPECT_EQ((*link)["verify"], "...L");
  const json* conf = findOne(r, "os.package.conffile.modified", "/etc/demo.conf", &n);
  ASSERT_TRUE(conf);
  EXPECT_EQ((*conf)["severity"], "info");
  const json* py = findOne(r, "os.package.modified", "/" + site + "/demo_py/__init__.py", &n);
  ASSERT_TRUE(py);
  EXPECT_EQ((*py)["package"], "python3-demo");
  EXPECT_EQ(n, 1);
  // RECORD defers to rpm for the files rpm installed: the same change is info there.
  const json* rec = findOne(r, "python.record.modified", "/" + site + "/demo_py/__init__.py", &n);
  ASSERT_TRUE(rec) << r["findings"].dump(1);
  EXPECT_EQ((*rec)["severity"], "info");
  auto loud = above(r, "info", {"image.tag.mutable"});
  EXPECT_EQ(loud.size(), 3u) << r["findings"].dump(1);
}

// RHEL 8-like: the same packages in a Berkeley DB `Packages` (read by librpm's bdb_ro), audited
// as a root filesystem.
TEST(OsFamilies, RpmBerkeleyDbRootfs) {
  if (!rpmTools() || !haveTool("db5.3_load") || !haveTool("python3"))
    GTEST_SKIP() << "needs root, rpm tools, db5.3_load, python3";
  std::string base = tempDir("rpm8");
  std::string rpms = buildRpms(base + "/build");
  std::string R = base + "/root";
  rpmInstall(rpms, R);
  // The header blobs rpm wrote, keyed by instance (native order) as RHEL 8's Packages holds
  // them, with key 0 holding the highest instance; then the sqlite database removed.
  writeFile(base + "/dump.py",
            "import sqlite3, struct, sys\n"
            "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n"
            "rows = c.execute('select hnum, blob from Packages').fetchall()\n"
            "out = ['VERSION=3', 'format=bytevalue', 'type=hash', 'db_pagesize=4096', 'HEADER=END']\n"
            "out += [' ' + struct.pack('=I', 0).hex(), ' ' + struct.pack('=I', max(h for h, _ in rows)).hex()]\n"
            "for h, blob in rows: out += [' ' + struct.pack('=I', h).hex(), ' ' + bytes(blob).hex()]\n"
            "print('\\n'.join(out + ['DATA=END']))\n");
  RunResult d = run("set -e; /usr/bin/python3 " + base + "/dump.py " + R + "/var/lib/rpm/rpmdb.sqlite > " + base +
                    "/pk.dump; rm -f " + R + "/var/lib/rpm/rpmdb.sqlite*; db5.3_load -f " + base + "/pk.dump " + R +
                    "/var/lib/rpm/Packages");
  ASSERT_EQ(d.code, 0) << d.err;
  writeFile(R + "/etc/os-release", "NAME=\"Red Hat Enterprise Linux\"\nID=\"rhel\"\nVERSION_ID=\"8.10\"\n");
  int code = -1;
  json clean = auditJson("dir:" + R, &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0) << clean["findings"].dump(1);
  EXPECT_TRUE(above(clean, "info").empty()) << clean["findings"].dump(1);
  EXPECT_EQ(clean["os_packages"]["format"], "bdb");
  EXPECT_EQ(clean["os_packages"]["count"], 2);
  EXPECT_GE(clean["os_packages"]["files_verified"].get<int>(), 8);
  writeFile(R + "/usr/bin/demo", "#!/bin/sh\necho HI\n");  // same size, other bytes
  json r = auditJson("dir:" + R, &code);
  EXPECT_EQ(code, 1);
  const json* f = modifiedOnce(r, "/usr/bin/demo", "demo");
  ASSERT_TRUE(f) << r["findings"].dump(1);
  EXPECT_EQ((*f)["verify"], "..5.");
  EXPECT_EQ(above(r, "info").size(), 1u) << r["findings"].dump(1);
}

namespace {

std::string q1(const std::string& content) {
  kernodeck::util::Hasher h("sha1");
  h.update(content);
  return "Q1" + kernodeck::util::base64Encode(h.raw());
}

// An Alpine-like system: its files (a symlink's content is its target) and the apk database
// whose Z: checksums are those of the files (a symlink's is that of its target text, as apk
// computes it).
struct ApkFile {
  std::string pkg, dir, name, content, link;
  bool executable = false;
};

const std::vector<ApkFile> kApkFiles = {
    {"musl", "lib", "ld-musl-x86_64.so.1",
     "\x7f"
     "ELF musl",
     "", true},
    {"busybox", "bin", "busybox",
     "\x7f"
     "ELF busybox",
     "", true},
    {"busybox", "bin", "sh", "", "/bin/busybox"},
    {"alpine-baselayout", "etc", "motd", "Welcome to Alpine!\n", ""},
    {"alpine-baselayout", "etc", "os-release", "ID=alpine\nVERSION_ID=3.19.1\n", ""},
};

std::string apkInstalled() {
  std::map<std::string, std::string> db;  // package -> its paragraph's file lines
  for (const auto& f : kApkFiles) {
    std::string& lines = db[f.pkg];
    if (lines.find("F:" + f.dir + "\n") == std::string::npos) lines += "F:" + f.dir + "\n";
    lines += "R:" + f.name + "\n" + (f.executable ? "a:0:0:755\n" : "") +
             "Z:" + q1(f.link.empty() ? f.content : f.link) + "\n";
  }
  std::string installed;
  for (const auto& [pkg, lines] : db)
    installed += "C:Q1AAAA\nP:" + pkg + "\nV:1.0-r0\nA:x86_64\no:" + pkg + "\n" + lines + "\n";
  return installed;
}

}  // namespace

// Alpine-like, audited as a root filesystem.
TEST(OsFamilies, ApkRootfs) {
  std::string R = tempDir("apk") + "/root";
  for (const auto& f : kApkFiles) {
    std::string path = R + "/" + f.dir + "/" + f.name;
    run("mkdir -p '" + R + "/" + f.dir + "'");
    if (!f.link.empty()) {
      ASSERT_EQ(run("ln -s '" + f.link + "' '" + path + "'").code, 0);
    } else {
      writeFile(path, f.content);
      if (f.executable) run("chmod 755 '" + path + "'");
    }
  }
  run("mkdir -p " + R + "/lib/apk/db");
  writeFile(R + "/lib/apk/db/installed", apkInstalled());
  int code = -1;
  json clean = auditJson("dir:" + R, &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0) << clean["findings"].dump(1);
  EXPECT_TRUE(above(clean, "info").empty()) << clean["findings"].dump(1);
  const json& os = clean["os_packages"];
  EXPECT_EQ(os["manager"], "apk");
  EXPECT_EQ(os["count"], 3);
  EXPECT_EQ(os["files_verified"], 5);
  if (npmCheckersMissing().empty()) {
    auto purls = sbomPurls("dir:" + R, tempDir("apk-sbom"));
    ASSERT_TRUE(purls.count("busybox")) << json(purls).dump();
    EXPECT_EQ(purls["busybox"]["purl"], "pkg:apk/alpine/busybox@1.0-r0?arch=x86_64&distro=alpine-3.19.1");
    EXPECT_EQ(purls["musl"]["namespace"], "alpine");
  }
  writeFile(R + "/bin/busybox",
            "\x7f"
            "ELF busybax");
  json r = auditJson("dir:" + R, &code);
  EXPECT_EQ(code, 1);
  const json* f = modifiedOnce(r, "/bin/busybox", "busybox");
  ASSERT_TRUE(f) << r["findings"].dump(1);
  EXPECT_EQ((*f)["manager"], "apk");
  EXPECT_EQ(above(r, "info").size(), 1u) << r["findings"].dump(1);
}

// Alpine-like, audited as an image: the layer walk records no sha1, so a second read of each
// layer concerned hashes the apk-owned files; a file changed in layer 1 is reported once.
TEST(OsFamilies, ApkImage) {
  json base = json::array({{{"path", "lib"}, {"type", "dir"}, {"mode", 0755}},
                           {{"path", "bin"}, {"type", "dir"}, {"mode", 0755}},
                           {{"path", "etc"}, {"type", "dir"}, {"mode", 0755}},
                           {{"path", "lib/apk/db"}, {"type", "dir"}, {"mode", 0755}},
                           {{"path", "lib/apk/db/installed"}, {"content", apkInstalled()}, {"mode", 0644}}});
  for (const auto& f : kApkFiles) {
    std::string path = f.dir + "/" + f.name;
    if (!f.link.empty())
      base.push_back({{"path", path}, {"type", "symlink"}, {"target", f.link}});
    else
      base.push_back({{"path", path}, {"content", f.content}, {"mode", f.executable ? 0755 : 0644}});
  }
  json spec = {{"architecture", "amd64"}, {"os", "linux"}, {"layers", json::array({{{"entries", base}}})}};
  std::string dir = tempDir("apkimg");
  std::string clean = mkimage(spec, dir + "/clean");
  ASSERT_FALSE(clean.empty());
  int code = -1;
  json c = auditJson("oci:" + dir + "/clean@" + clean, &code);
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(code, 0) << c["findings"].dump(1);
  EXPECT_TRUE(above(c, "info").empty()) << c["findings"].dump(1);
  EXPECT_EQ(countFindings(c, "os.package.unverifiable"), 0) << c["findings"].dump(1);
  EXPECT_EQ(c["os_packages"]["manager"], "apk");
  EXPECT_EQ(c["os_packages"]["count"], 3);
  EXPECT_EQ(c["os_packages"]["files_verified"], 5);
  spec["layers"].push_back({{"entries", json::array({{{"path", "bin/busybox"},
                                                      {"content",
                                                       "\x7f"
                                                       "ELF busybax"},
                                                      {"mode", 0755}}})}});
  std::string tampered = mkimage(spec, dir + "/tampered");
  ASSERT_FALSE(tampered.empty());
  json r = auditJson("oci:" + dir + "/tampered@" + tampered, &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 1);
  const json* f = modifiedOnce(r, "/bin/busybox", "busybox");
  ASSERT_TRUE(f) << r["findings"].dump(1);
  EXPECT_EQ((*f)["manager"], "apk");
  EXPECT_EQ((*f)["layer"], "1");
  EXPECT_EQ(above(r, "info").size(), 1u) << r["findings"].dump(1);
  EXPECT_EQ(countFindings(r, "os.package.unverifiable"), 0) << r["findings"].dump(1);
  EXPECT_EQ(r["os_packages"]["files_verified"], 4);
}

}  // namespace integration_os_families_test
