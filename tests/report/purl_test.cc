// Package URLs as the purl spec's types and the scanners that match them expect (purl.h).
// (tests/integration/output_formats_test.cc parses those of real audits with packageurl-js.)
#include "kernodeck/report/purl.h"

#include <gtest/gtest.h>

#include "kernodeck/os/dpkg.h"

namespace report_purl_test {

using namespace kernodeck::report;
using nlohmann::json;

TEST(Purl, OsPackagesCarryArchDistroAndUpstreamWhereTheSourceDiffers) {
  Distro debian{"debian", "12", "bookworm"}, rhel{"rhel", "8.9", ""}, alpine{"alpine", "3.19.1", ""};
  struct Case {
    const char* manager;
    Distro distro;
    json package;
    const char* purl;
  } cases[] = {
      // Source named apart (dpkg writes "Source: glibc"): upstream is the source's name.
      {"dpkg",
       debian,
       {{"name", "libc6"}, {"version", "2.36-9+deb12u4"}, {"architecture", "amd64"}, {"source", "glibc"}},
       "pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64&distro=debian-12&upstream=glibc"},
      // A binNMU: the source has the package's name and another version.
      {"dpkg",
       debian,
       {{"name", "attr"},
        {"version", "1:2.4.47-2+b1"},
        {"architecture", "amd64"},
        {"source", "attr"},
        {"source_version", "1:2.4.47-2"}},
       "pkg:deb/debian/attr@1:2.4.47-2%2Bb1?arch=amd64&distro=debian-12&upstream=attr%401:2.4.47-2"},
      // Both apart, as an older report's "source" wrote them.
      {"dpkg",
       debian,
       {{"name", "libgcc-s1"},
        {"version", "12.2.0-14+b1"},
        {"architecture", "amd64"},
        {"source", "gcc-12 (12.2.0-14)"}},
       "pkg:deb/debian/libgcc-s1@12.2.0-14%2Bb1?arch=amd64&distro=debian-12&upstream=gcc-12%4012.2.0-14"},
      // The source is the package itself: no upstream.
      {"dpkg",
       debian,
       {{"name", "bash"}, {"version", "5.2.15-2+b2"}, {"architecture", "amd64"}, {"source", "bash"}},
       "pkg:deb/debian/bash@5.2.15-2%2Bb2?arch=amd64&distro=debian-12"},
      {"dpkg",
       {"ubuntu", "22.04", "jammy"},
       {{"name", "dpkg"}, {"version", "1.21.1ubuntu2.3"}, {"architecture", "amd64"}, {"source", "dpkg"}},
       "pkg:deb/ubuntu/dpkg@1.21.1ubuntu2.3?arch=amd64&distro=ubuntu-22.04"},
      // Debian testing has no VERSION_ID: the codename names the release.
      {"dpkg",
       {"debian", "", "trixie"},
       {{"name", "bash"}, {"version", "5.2.37-1"}, {"architecture", "arm64"}},
       "pkg:deb/debian/bash@5.2.37-1?arch=arm64&distro=debian-trixie"},
      // rpm: the epoch a qualifier, Red Hat's vendor name, the source rpm when it differs.
      {"rpm",
       rhel,
       {{"name", "openssl-libs"},
        {"version", "1:1.1.1k-9.el8_7"},
        {"architecture", "x86_64"},
        {"source", "openssl-1.1.1k-9.el8_7.src.rpm"}},
       "pkg:rpm/redhat/openssl-libs@1.1.1k-9.el8_7?arch=x86_64&distro=rhel-8.9&epoch=1&"
       "upstream=openssl-1.1.1k-9.el8_7.src.rpm"},
      {"rpm",
       rhel,
       {{"name", "demo"}, {"version", "1.2-3.el9"}, {"architecture", "noarch"}, {"source", "demo-1.2-3.el9.src.rpm"}},
       "pkg:rpm/redhat/demo@1.2-3.el9?arch=noarch&distro=rhel-8.9"},
      {"rpm",
       {"rocky", "9.4", ""},
       {{"name", "bash"},
        {"version", "0:5.1.8-9.el9"},
        {"architecture", "x86_64"},
        {"source", "bash-5.1.8-9.el9.src.rpm"}},
       "pkg:rpm/rocky/bash@5.1.8-9.el9?arch=x86_64&distro=rocky-9.4"},
      // apk: the origin is the source package.
      {"apk",
       alpine,
       {{"name", "libcrypto3"}, {"version", "3.1.4-r5"}, {"architecture", "x86_64"}, {"source", "openssl"}},
       "pkg:apk/alpine/libcrypto3@3.1.4-r5?arch=x86_64&distro=alpine-3.19.1&upstream=openssl"},
      {"apk",
       alpine,
       {{"name", "musl"}, {"version", "1.2.4_git20230717-r4"}, {"architecture", "x86_64"}, {"source", "musl"}},
       "pkg:apk/alpine/musl@1.2.4_git20230717-r4?arch=x86_64&distro=alpine-3.19.1"},
  };
  for (const auto& c : cases) EXPECT_EQ(osPackageUrl(c.manager, c.distro, c.package).str(), c.purl) << c.package;
}

TEST(Purl, DistroFromOsRelease) {
  EXPECT_EQ(Distro::fromOsSection({{"id", "debian"}, {"version_id", "12"}}).qualifier(), "debian-12");
  EXPECT_EQ(Distro::fromOsSection({{"id", "rhel"}, {"version_id", "8.9"}}).qualifier(), "rhel-8.9");
  EXPECT_EQ(Distro::fromOsSection({{"id", "alpine"}, {"version_id", "3.19.1"}}).qualifier(), "alpine-3.19.1");
  EXPECT_EQ(Distro::fromOsSection(json::object()).qualifier(), "");
  EXPECT_EQ(Distro::fromOsSection(nullptr).qualifier(), "");
}

TEST(Purl, PypiAndCondaNamesAsTheirTypesSay) {
  EXPECT_EQ(pypiUrl("Zope.Interface", "6.0").str(), "pkg:pypi/zope-interface@6.0");
  EXPECT_EQ(pypiUrl("typing__Extensions", "4.9.0").str(), "pkg:pypi/typing-extensions@4.9.0");
  EXPECT_EQ(pypiUrl("torch", "2.3.0+cu121").str(), "pkg:pypi/torch@2.3.0%2Bcu121");
  EXPECT_EQ(condaUrl({{"name", "numpy"},
                      {"version", "1.26.4"},
                      {"build", "py311h64a7726_0"},
                      {"channel", "https://conda.anaconda.org/conda-forge/linux-64"},
                      {"subdir", "linux-64"},
                      {"file", "numpy-1.26.4-py311h64a7726_0.conda"}})
                .str(),
            "pkg:conda/numpy@1.26.4?build=py311h64a7726_0&channel=conda-forge&subdir=linux-64&type=conda");
  EXPECT_EQ(condaUrl({{"name", "python"}, {"version", "3.9.7"}, {"channel", "pkgs/main"}, {"subdir", "osx-64"}}).str(),
            "pkg:conda/python@3.9.7?channel=main&subdir=osx-64");
}

// The source package the deb purls' upstream comes from, as dpkg's status file writes it.
TEST(Purl, DpkgSourceFieldGivesNameAndVersion) {
  auto pkgs = kernodeck::os::parseDpkgStatus(
      "Package: libc6\nStatus: install ok installed\nVersion: 2.36-9+deb12u4\nSource: glibc\n\n"
      "Package: attr\nStatus: install ok installed\nVersion: 1:2.4.47-2+b1\nSource: attr (1:2.4.47-2)\n\n"
      "Package: bash\nStatus: install ok installed\nVersion: 5.2.15-2+b2\n\n");
  ASSERT_EQ(pkgs.size(), 3u);
  EXPECT_EQ(pkgs[0].source, "glibc");
  EXPECT_EQ(pkgs[0].sourceVersion, "");
  EXPECT_EQ(pkgs[1].source, "attr");
  EXPECT_EQ(pkgs[1].sourceVersion, "1:2.4.47-2");
  EXPECT_EQ(pkgs[2].source, "");
}

}  // namespace report_purl_test
