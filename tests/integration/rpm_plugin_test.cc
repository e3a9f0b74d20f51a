// The rpm plugin (libkernodeck_rpm.so, src/os/rpm_plugin.cc) seen from outside: the kernodeck
// executable links no librpm, loads the plugin only for an image with an rpm database, and
// without a usable plugin reports such an image as an error naming the file, never as clean.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support.h"

namespace integration_rpm_plugin_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

std::string dirOf(const std::string& p) { return p.substr(0, p.rfind('/')); }

// A root filesystem with an empty rpm database that rpm itself wrote (rpmdb.sqlite), or without
// one; both have an os-release.
std::string rootfs(const std::string& tag, bool withRpm) {
  std::string R = tempDir(tag);
  writeFile(R + "/etc/os-release", "NAME=\"Red Hat Enterprise Linux\"\nID=\"rhel\"\nVERSION_ID=\"9.4\"\n");
  if (withRpm) {
    RunResult r = run("rpm --root '" + R + "' --dbpath /var/lib/rpm --initdb 2>&1");
    EXPECT_EQ(r.code, 0) << r.out;
  }
  return R;
}

// The findings with `code`.
std::vector<json> findings(const json& report, const std::string& code) {
  std::vector<json> out;
  if (report.is_object())
    for (const auto& f : report["findings"])
      if (f["code"] == code) out.push_back(f);
  return out;
}

}  // namespace

// `readelf -d`: librpm (nor its sqlite) is not among the executable's needed libraries; the
// plugin beside it has it.
TEST(RpmPlugin, TheExecutableDoesNotLinkLibrpm) {
  if (!haveTool("readelf")) GTEST_SKIP() << "needs readelf (binutils)";
  RunResult r = run("readelf -d '" + K + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_NE(r.out.find("(NEEDED)"), std::string::npos) << r.out;  // the table read is the right one
  EXPECT_EQ(r.out.find("librpm"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libsqlite"), std::string::npos) << r.out;
  RunResult p = run("readelf -d '" + dirOf(K) + "/libkernodeck_rpm.so'");
  if (p.code != 0) GTEST_SKIP() << "this build has no rpm plugin (no librpm-dev)";
  EXPECT_NE(p.out.find("librpm.so"), std::string::npos) << p.out;
}

// The dynamic loader's own log (LD_DEBUG=files): an audit of a root filesystem without an rpm
// database opens neither the plugin nor librpm; one with a database opens both.
TEST(RpmPlugin, LoadedOnlyForAnImageWithAnRpmDatabase) {
  if (!haveTool("rpm") || ::access((dirOf(K) + "/libkernodeck_rpm.so").c_str(), F_OK) != 0)
    GTEST_SKIP() << "needs rpm and the rpm plugin";
  std::string plain = rootfs("rpmplug-plain", false), withRpm = rootfs("rpmplug-db", true);
  RunResult a = run("LD_DEBUG=files " + K + " audit --json rootfs:" + plain);
  EXPECT_EQ(a.code, 0) << a.err.substr(0, 2000);
  EXPECT_NE(a.err.find("libcrypto"), std::string::npos);  // the log is there
  EXPECT_EQ(a.err.find("libkernodeck_rpm"), std::string::npos);
  EXPECT_EQ(a.err.find("librpm"), std::string::npos);
  RunResult b = run("LD_DEBUG=files " + K + " audit --json rootfs:" + withRpm);
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.err.find("libkernodeck_rpm.so"), std::string::npos);
  EXPECT_NE(b.err.find("librpm.so"), std::string::npos);
}

// A kernodeck without its plugin (a copy alone in a directory), then with a file there that is
// not a library and one that is a library but not the rpm plugin: an image with an rpm database
// is an error finding naming the file (exit 1), the same image passes with the plugin, and an
// image without rpm passes whatever lies there (it is never opened).
TEST(RpmPlugin, WithoutAUsablePluginAnRpmImageIsAnErrorNamingIt) {
  if (!haveTool("rpm")) GTEST_SKIP() << "needs rpm";
  std::string bin = tempDir("rpmplug-bin");
  ASSERT_EQ(run("cp '" + K + "' '" + bin + "/kernodeck'").code, 0);
  std::string copy = bin + "/kernodeck", plugin = bin + "/libkernodeck_rpm.so";
  std::string withRpm = rootfs("rpmplug-db2", true), plain = rootfs("rpmplug-plain2", false);
  auto audit = [](const std::string& k, const std::string& root, int* code) {
    RunResult r = run(k + " audit --json rootfs:" + root);
    *code = r.code;
    return json::parse(r.out, nullptr, false);
  };
  int code = -1;
  json good = audit(K, withRpm, &code);
  EXPECT_EQ(code, 0) << good.dump(1);
  EXPECT_EQ(good["os_packages"]["manager"], "rpm") << good.dump(1);
  EXPECT_TRUE(findings(good, "os.package.reader-missing").empty());
  struct Case {
    std::string what, content, says;
  };
  const Case cases[] = {
      {"no plugin", "", "neither " + plugin},
      {"not a library", "not an ELF file\n", plugin},
      {"another library", readFile(FAKE_PLUGIN_OK), plugin + ": not a Kernodeck rpm plugin"},
  };
  for (const auto& c : cases) {
    if (!c.content.empty()) writeFile(plugin, c.content);
    json r = audit(copy, withRpm, &code);
    EXPECT_EQ(code, 1) << c.what << ": " << r.dump(1);
    auto missing = findings(r, "os.package.reader-missing");
    ASSERT_EQ(missing.size(), 1u) << c.what << ": " << r.dump(1);
    EXPECT_EQ(missing[0]["severity"], "error");
    EXPECT_NE(missing[0]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.what << ": " << missing[0].dump();
    json p = audit(copy, plain, &code);
    EXPECT_EQ(code, 0) << c.what << ": " << p.dump(1);
    EXPECT_TRUE(findings(p, "os.package.reader-missing").empty()) << c.what;
  }
}

}  // namespace integration_rpm_plugin_test
