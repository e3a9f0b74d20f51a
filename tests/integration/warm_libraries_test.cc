// The warm path (issue 31) loads only what a lookup needs: `kernodeck` links neither libarchive
// nor librpm nor libcurl (each is opened with dlopen at first use: oci/archive_lib.h, the rpm
// plugin, registry/curl_lib.h), and a replayed audit of a registry image with an rpm database,
// whose result is cached, opens neither of the first two, as the dynamic loader's own log
// (LD_DEBUG=files) says; the audit that analysed it opened both, and the replayed report is the
// same. An audit that talks to no registry never opens libcurl.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "local_registry.h"
#include "support.h"

namespace integration_warm_libraries_test {

using nlohmann::json;
using namespace kdktest;

TEST(WarmLibraries, TheExecutableLinksNeitherLibarchiveNorLibrpmNorLibcurl) {
  if (!haveTool("readelf")) GTEST_SKIP() << "needs readelf (binutils)";
  RunResult r = run(std::string("readelf -d '") + KERNODECK_BIN + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_NE(r.out.find("libcrypto"), std::string::npos) << r.out;  // the table read is the right one
  EXPECT_EQ(r.out.find("libarchive"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("librpm"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcurl"), std::string::npos) << r.out;
}

TEST(WarmLibraries, AReplayedAuditOpensNeitherLibarchiveNorLibrpm) {
  if (!haveTool("umoci") || !haveTool("rpm")) GTEST_SKIP() << "needs umoci and rpm";
  LocalRegistry reg;
  if (!reg.start()) GTEST_SKIP() << "needs docker-registry, skopeo and curl";
  std::string base = tempDir("warm-libs"), L = base + "/L", B = base + "/B";
  RunResult b = run("set -e; umoci init --layout " + L + "; umoci new --image " + L + ":base; " + umociUnpack() +
                    " --image " + L + ":base " + B + " >/dev/null; rpm --root " + B +
                    "/rootfs --dbpath /var/lib/rpm --initdb; umoci repack --image " + L + ":base " + B);
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_TRUE(reg.push(L, "base", "warm/libs:1"));
  std::string cmd = std::string("LD_DEBUG=files ") + KERNODECK_BIN + " audit --json --cache-dir " + base +
                    "/cache --fail-on none " + reg.host() + "/warm/libs:1";
  auto opened = [](const RunResult& r, const std::string& lib) {
    return r.err.find("file=" + lib) != std::string::npos;
  };
  RunResult cold = run(cmd);
  ASSERT_EQ(cold.code, 0) << cold.out;
  EXPECT_TRUE(opened(cold, "libarchive.so")) << "the log lists what was opened";
  EXPECT_TRUE(opened(cold, "librpm.so"));
  run(cmd);  // the image result is stored by the second audit, from the layer results
  RunResult warm = run(cmd);
  ASSERT_EQ(warm.code, 0) << warm.out;
  json c = json::parse(cold.out, nullptr, false), w = json::parse(warm.out, nullptr, false);
  ASSERT_TRUE(w.is_object() && c.is_object());
  ASSERT_TRUE(w["subject"].contains("cached_result")) << w["subject"].dump();
  EXPECT_FALSE(opened(warm, "libarchive.so"));
  EXPECT_FALSE(opened(warm, "librpm.so"));
  EXPECT_FALSE(opened(warm, "libkernodeck_rpm.so"));
  EXPECT_TRUE(opened(warm, "libcurl.so"));
  EXPECT_EQ(w["os_packages"], c["os_packages"]);
  EXPECT_EQ(w["findings"], c["findings"]);
}

// Without libarchive (its file hidden, in a private mount namespace, by /dev/null mounted over
// it): kernodeck still starts, and an audit that reads a layer ends with one line naming
// libarchive and exit 3 (could not complete), never a crash or a report without the layers.
TEST(WarmLibraries, WithoutLibarchiveALayerReadIsOneLineAndExit3) {
  if (::geteuid() != 0 || !haveTool("unshare") || !haveTool("mount") || !haveTool("ldconfig"))
    GTEST_SKIP() << "needs root, unshare and mount";
  RunResult lib = run("ldconfig -p | awk '/libarchive.so.13 / {print $NF; exit}'");
  std::string path = lib.out.substr(0, lib.out.find('\n'));
  ASSERT_FALSE(path.empty()) << "libarchive13 is a dependency";
  std::string dir = tempDir("no-libarchive") + "/img";
  json spec = {{"layers", json::array({{{"compression", "gzip"},
                                        {"entries", json::array({{{"path", "etc/hello"}, {"content", "x"}}})}}})}};
  ASSERT_FALSE(mkimage(spec, dir).empty());
  std::string hidden = "unshare -m sh -c 'mount --bind /dev/null " + path + " && exec \"$0\" \"$@\"' ";
  RunResult v = run(hidden + KERNODECK_BIN + " help");
  EXPECT_NE(v.code, 127) << v.err;  // it starts: libarchive is not needed to run
  RunResult r = run(hidden + KERNODECK_BIN + " audit --json oci:" + dir);
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("kernodeck: cannot load libarchive (libarchive.so.13)"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  RunResult ok = run(std::string(KERNODECK_BIN) + " audit --json oci:" + dir);  // the same image, libarchive there
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
}

namespace {

// The file the dynamic loader would open for SONAME, or "" (ldconfig's cache).
std::string libraryFile(const std::string& soname) {
  RunResult lib = run("ldconfig -p | awk '/" + soname + " / {print $NF; exit}'");
  return lib.out.substr(0, lib.out.find('\n'));
}

// An image for the libcurl tests: one gzip layer, in an OCI layout.
std::string oneLayerImage(const std::string& name) {
  std::string dir = tempDir(name) + "/img";
  json spec = {{"layers", json::array({{{"compression", "gzip"},
                                        {"entries", json::array({{{"path", "etc/hello"}, {"content", "x"}}})}}})}};
  return mkimage(spec, dir).empty() ? "" : dir;
}

}  // namespace

// An audit of an OCI layout talks to no registry: the loader's log shows libarchive opened (the
// layers were read) and libcurl never.
TEST(WarmLibraries, AnAuditOfALayoutNeverOpensLibcurl) {
  std::string dir = oneLayerImage("layout-no-libcurl");
  ASSERT_FALSE(dir.empty());
  RunResult layout = run(std::string("LD_DEBUG=files ") + KERNODECK_BIN + " audit --json oci:" + dir);
  ASSERT_EQ(layout.code, 0) << layout.out;
  EXPECT_NE(layout.err.find("file=libarchive.so"), std::string::npos) << "the log lists what was opened";
  EXPECT_EQ(layout.err.find("file=libcurl.so"), std::string::npos);
}

// Without libcurl (its file hidden under /dev/null in a private mount namespace) an audit of a
// layout passes; an audit of a registry reference ends with one line naming libcurl and exit 3,
// not a crash.
TEST(WarmLibraries, WithoutLibcurlOnlyARegistryAuditStopsWithOneLineAndExit3) {
  if (::geteuid() != 0 || !haveTool("unshare") || !haveTool("mount") || !haveTool("ldconfig"))
    GTEST_SKIP() << "needs root, unshare and mount";
  std::string dir = oneLayerImage("no-libcurl");
  ASSERT_FALSE(dir.empty());
  std::string path = libraryFile("libcurl.so.4");
  ASSERT_FALSE(path.empty()) << "libcurl4 is a dependency";
  std::string hidden = "unshare -m sh -c 'mount --bind /dev/null " + path + " && exec \"$0\" \"$@\"' ";
  RunResult offline = run(hidden + KERNODECK_BIN + " audit --json oci:" + dir);
  EXPECT_EQ(offline.code, 0) << offline.out << offline.err;
  RunResult remote = run(hidden + KERNODECK_BIN + " audit --json --cache-dir " + tempDir("no-libcurl-cache") +
                         " 127.0.0.1:9/none/such:1");
  EXPECT_EQ(remote.code, 3) << remote.out << remote.err;
  EXPECT_NE(remote.err.find("kernodeck: cannot load libcurl (libcurl.so.4)"), std::string::npos) << remote.err;
  EXPECT_EQ(std::count(remote.err.begin(), remote.err.end(), '\n'), 1) << remote.err;
}

}  // namespace integration_warm_libraries_test
