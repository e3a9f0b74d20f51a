// The warm path (issue 31) loads only what a lookup needs: `kernodeck` links neither libarchive
// nor librpm (both are opened with dlopen at first use: oci/archive_lib.h, the rpm plugin), and
// a replayed audit of a registry image with an rpm database, whose result is cached, opens
// neither, as the dynamic loader's own log (LD_DEBUG=files) says; the audit that analysed it
// opened both, and the replayed report is the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "local_registry.h"
#include "support.h"

using nlohmann::json;
using namespace kdktest;

TEST(WarmLibraries, TheExecutableLinksNeitherLibarchiveNorLibrpm) {
  if (!haveTool("readelf")) GTEST_SKIP() << "needs readelf (binutils)";
  RunResult r = run(std::string("readelf -d '") + KERNODECK_BIN + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_NE(r.out.find("libcurl"), std::string::npos) << r.out;  // the table read is the right one
  EXPECT_EQ(r.out.find("libarchive"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("librpm"), std::string::npos) << r.out;
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
