// apk's database format, its checksums, and rpm -V's comparison (verifyOwnedFiles) on a real
// directory tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernodeck/os/apk.h"
#include "kernodeck/os/conda.h"
#include "kernodeck/os/package_db.h"
#include "kernodeck/os/rpm.h"
#include "kernodeck/util/hash.h"

namespace os_package_db_test {

using namespace kernodeck;
using namespace kernodeck::os;

namespace {

std::string q1(const std::string& content) {
  util::Hasher h("sha1");
  h.update(content);
  return "Q1" + util::base64Encode(h.raw());
}

std::string sha(const std::string& alg, const std::string& content) {
  util::Hasher h(alg);
  h.update(content);
  return h.hex();
}

struct Tree {
  std::string root;
  Tree() {
    char tmpl[] = "/tmp/kdk-pkgdb-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~Tree() { std::filesystem::remove_all(root); }
  void write(const std::string& rel, const std::string& content, mode_t mode = 0644) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
    std::ofstream(root + "/" + rel) << content;
    ::chmod((root + "/" + rel).c_str(), mode);
  }
  void link(const std::string& rel, const std::string& target) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
    std::filesystem::create_symlink(target, root + "/" + rel);
  }
};

}  // namespace

TEST(Apk, ChecksumsDecode) {
  struct Case {
    std::string z, alg, hex;
  };
  const Case cases[] = {
      {q1("hello\n"), "sha1", sha("sha1", "hello\n")},
      {"Q2" + util::base64Encode(std::string(32, 'a')), "sha256", util::toHex(std::string(32, 'a'))},
      {"d41d8cd98f00b204e9800998ecf8427E", "md5", "d41d8cd98f00b204e9800998ecf8427e"},
      {"Q1notbase64!!", "", ""},
      {"Q1" + util::base64Encode("short"), "", ""},
      {"", "", ""},
  };
  for (const auto& c : cases) {
    auto [alg, hex] = decodeApkChecksum(c.z);
    EXPECT_EQ(alg, c.alg) << c.z;
    EXPECT_EQ(hex, c.hex) << c.z;
  }
}

TEST(Apk, InstalledDatabaseParses) {
  std::string text =
      "C:Q1aaaa\nP:musl\nV:1.2.4-r2\nA:x86_64\no:musl\nF:lib\nR:ld-musl-x86_64.so.1\na:0:0:755\nZ:" + q1("musl") +
      "\nR:libc.musl-x86_64.so.1\nZ:" + q1("ld-musl-x86_64.so.1") +
      "\n\n"
      "P:alpine-baselayout\nV:3.4.3-r1\nA:x86_64\nF:etc\nR:motd\nZ:" +
      q1("motd\n") +
      "\nM:0:0:755\nF:/var/empty/\n\n"
      "V:9\nF:orphan\nR:file\n";
  PackageDatabase db = parseApkInstalled(text);
  ASSERT_EQ(db.packages.size(), 2u);
  EXPECT_EQ(db.packages[0].name, "musl");
  EXPECT_EQ(db.packages[0].version, "1.2.4-r2");
  EXPECT_EQ(db.packages[0].architecture, "x86_64");
  EXPECT_EQ(db.packages[0].origin, "musl");
  ASSERT_EQ(db.files.size(), 3u);  // the paragraph without P: owns nothing
  EXPECT_EQ(db.files[0].path, "lib/ld-musl-x86_64.so.1");
  EXPECT_EQ(db.files[0].package, "musl");
  EXPECT_EQ(db.files[0].mode, 0755u);
  EXPECT_EQ(db.files[0].digest, sha("sha1", "musl"));
  EXPECT_FALSE(db.files[1].mode.has_value());
  EXPECT_EQ(db.files[2].path, "etc/motd");
  EXPECT_TRUE(db.files[2].config);
  EXPECT_TRUE(db.owns("var/empty"));
  EXPECT_TRUE(db.owns("lib/ld-musl-x86_64.so.1"));
  EXPECT_FALSE(db.owns("orphan/file"));
}

TEST(PackageDb, VerifiesLikeRpmV) {
  Tree t;
  t.write("usr/bin/ok", "ok\n", 0755);
  t.write("usr/bin/grown", "grown and more\n", 0755);
  t.write("usr/bin/sameSize", "abc\n", 0755);
  t.write("usr/bin/chmod", "x\n", 0777);
  t.write("etc/app.conf", "changed\n");
  t.link("usr/bin/link", "ok");
  t.link("usr/bin/apklink", "ok");
  t.link("lib", "usr/lib");
  t.write("usr/lib/libx.so", "lib\n");
  PackageDatabase db;
  auto file = [&](const std::string& pkg, const std::string& path, const std::string& content, uint32_t mode) {
    OwnedFile f;
    f.package = pkg, f.path = path, f.mode = mode, f.size = static_cast<int64_t>(content.size());
    f.digestAlgorithm = "sha256", f.digest = sha("sha256", content);
    db.files.push_back(f);
    return &db.files.back();
  };
  file("a", "usr/bin/ok", "ok\n", 0755);
  file("a", "usr/bin/grown", "grown\n", 0755);
  file("b", "usr/bin/grown", "grown\n", 0755);  // shared by two packages: reported once
  file("a", "usr/bin/sameSize", "xyz\n", 0755);
  file("a", "usr/bin/chmod", "x\n", 0755);
  file("a", "etc/app.conf", "orig\n", 0644)->config = true;
  file("a", "usr/bin/gone", "g\n", 0755);
  file("a", "usr/bin/optional", "g\n", 0755)->missingOk = true;
  file("a", "lib/libx.so", "lib\n", 0644);  // through the /lib -> usr/lib link
  OwnedFile link;
  link.package = "a", link.path = "usr/bin/link", link.kind = OwnedFile::Kind::Symlink, link.linkTarget = "elsewhere";
  db.files.push_back(link);
  OwnedFile apkLink;  // apk: the kind is not recorded and a link's digest is that of its target
  apkLink.package = "a", apkLink.path = "usr/bin/apklink", apkLink.kind = OwnedFile::Kind::Any,
  apkLink.linkDigest = true;
  apkLink.digestAlgorithm = "sha1", apkLink.digest = sha("sha1", "ok");
  db.files.push_back(apkLink);
  auto view = oci::openDirView(t.root);
  ASSERT_TRUE(view.ok());
  verifyOwnedFiles(**view, db);
  std::map<std::string, std::string> modified;
  for (const auto& m : db.modified) {
    EXPECT_TRUE(modified.emplace(m.path, m.detail).second) << m.path << " reported twice";
    EXPECT_EQ(m.config, m.path == "etc/app.conf");
  }
  EXPECT_EQ(modified, (std::map<std::string, std::string>{{"usr/bin/grown", "S.5."},
                                                          {"usr/bin/sameSize", "..5."},
                                                          {"usr/bin/chmod", ".M.."},
                                                          {"etc/app.conf", "S.5."},
                                                          {"usr/bin/link", "...L"}}));
  ASSERT_EQ(db.missing.size(), 1u);
  EXPECT_EQ(db.missing[0].path, "usr/bin/gone");
  EXPECT_EQ(db.verified, 3u);  // ok, libx.so, apklink
  EXPECT_EQ(db.unverifiable, 0u);
}

// Databases librpm cannot read are reported, never fatal: SUSE's ndb, and garbage where the
// sqlite or Berkeley DB file should be.
TEST(Rpm, UnreadableDatabasesAreReportedNotFatal) {
  struct Case {
    std::string file, content, errorHas;
  };
  const Case cases[] = {
      {"usr/lib/sysimage/rpm/Packages.db", "ndb", "ndb"},
      {"var/lib/rpm/rpmdb.sqlite", std::string(4096, 'x'), "rpm database"},
      {"var/lib/rpm/Packages", std::string(8192, '\0'), "rpm database"},
  };
  for (const auto& c : cases) {
    Tree t;
    t.write(c.file, c.content);
    auto view = oci::openDirView(t.root);
    ASSERT_TRUE(view.ok());
    PackageDatabase db = readRpm(**view);
    EXPECT_TRUE(db.present) << c.file;
    EXPECT_NE(db.error.find(c.errorHas), std::string::npos) << c.file << ": " << db.error;
    EXPECT_TRUE(db.packages.empty()) << c.file;
  }
  Tree none;
  none.write("etc/os-release", "ID=x\n");
  auto view = oci::openDirView(none.root);
  EXPECT_FALSE(readRpm(**view).present);
}

// The rpm plugin's interface is checked before anything in it is called: a missing file, a
// library that is not the plugin (the LibTorch stand-in), then the real one beside this program.
TEST(Rpm, PluginIsCheckedBeforeUse) {
  auto missing = loadRpmPlugin("/nonexistent/libkernodeck_rpm.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/libkernodeck_rpm.so"), std::string::npos)
      << missing.error().message;
  auto other = loadRpmPlugin(FAKE_PLUGIN_OK);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find(std::string(FAKE_PLUGIN_OK) + ": not a Kernodeck rpm plugin"), std::string::npos)
      << other.error().message;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string real = self.substr(0, self.rfind('/')) + "/libkernodeck_rpm.so";
  if (!std::filesystem::exists(real)) GTEST_SKIP() << "this build has no rpm plugin (no librpm-dev)";
  auto ok = loadRpmPlugin(real);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)->abi_version, rpmplugin::kAbiVersion);
  EXPECT_EQ(std::string((*ok)->librpm_version).substr(0, 2), "4.");
  EXPECT_TRUE(rpmSupported()) << rpmPluginError();
  EXPECT_EQ(librpmVersion(), (*ok)->librpm_version);
  EXPECT_EQ(rpmPluginIdentity().rfind(real + " ", 0), 0u) << rpmPluginIdentity();
}

// A conda-meta record is the image's: nested past util::kMaxJsonDepth it is an error naming the
// record, not a tree built (or a crash).
TEST(Conda, ADeeplyNestedRecordIsOneLineError) {
  PackageDatabase db;
  std::string deep = "{\"name\":\"x\",\"files\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  Status st = parseCondaMeta(deep, "opt/conda", db);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("conda-meta record nests"), std::string::npos) << st.error().message;
  EXPECT_EQ(st.error().message.find('\n'), std::string::npos);
  EXPECT_TRUE(db.packages.empty());
  PackageDatabase good;
  ASSERT_TRUE(parseCondaMeta(R"({"name":"numpy","version":"1.26.4","files":[]})", "opt/conda", good).ok());
  ASSERT_EQ(good.packages.size(), 1u);
}

}  // namespace os_package_db_test
