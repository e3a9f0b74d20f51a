#include "kernodeck/python/environment.h"

#include <gtest/gtest.h>

#include "../oci/tar_builder.h"
#include "kernodeck/os/dpkg.h"
#include "kernodeck/os/image_cuda.h"
#include "kernodeck/python/contract.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/util/hash.h"

namespace python_environment_test {

using namespace kernodeck;
using namespace kernodeck::python;

namespace {

using kdktest::viewOf;

std::string recordHash(const std::string& content) {
  util::Hasher h("sha256");
  h.update(content);
  return "sha256=" + util::base64UrlNoPad(h.raw());
}

}  // namespace

TEST(PythonEnvironment, DiscoversSystemVenvAndVendoredIsIgnored) {
  const std::string sys = "usr/lib/python3/dist-packages/";
  auto v = viewOf({
      {"usr/bin/python3.11", 'f', "ELF"},
      {"usr/lib/python3.11/os.py", 'f', "#"},
      {sys + "six-1.16.0.dist-info/METADATA", 'f', "Name: six\nVersion: 1.16.0\n"},
      {sys + "setuptools/_vendor/packaging-23.0.dist-info/METADATA", 'f', "Name: packaging\nVersion: 23.0\n"},
      {sys + "Six-1.15.0.dist-info/METADATA", 'f', "Name: Six\nVersion: 1.15.0\n"},
      {"opt/venv/pyvenv.cfg", 'f', "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n"},
      {"opt/venv/bin/python", 'l', "", "/usr/bin/python3.11"},
      {"opt/venv/lib/python3.11/site-packages/attrs-23.1.0.dist-info/METADATA", 'f', "Name: attrs\nVersion: 23.1.0\n"},
  });
  auto envs = discoverEnvironments(v);
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(envs[0].kind, "system");
  EXPECT_EQ(envs[0].interpreter, "usr/bin/python3.11");
  EXPECT_EQ(envs[0].distributions.size(), 2u);  // the vendored packaging is not installed
  EXPECT_EQ(envs[0].duplicates.size(), 1u);     // six twice in one directory
  EXPECT_EQ(envs[1].kind, "venv");
  EXPECT_EQ(envs[1].version, "3.11.2");
  EXPECT_TRUE(envs[1].fullVersionKnown);
  ASSERT_EQ(envs[1].paths.size(), 2u);  // its own, then the system's
  EXPECT_TRUE(envs[1].find("attrs"));
  EXPECT_TRUE(envs[1].find("six"));
}

TEST(PythonEnvironment, RecordCheckFindsTamperedMissingAndUnlisted) {
  const std::string site = "usr/local/lib/python3.11/site-packages/";
  std::string record = "pkg/__init__.py," + recordHash("print(1)\n") + ",9\n" + "pkg/mod.py," + recordHash("x = 1\n") +
                       ",6\n" + "pkg/gone.py," + recordHash("y\n") + ",2\npkg/__pycache__/m.cpython-311.pyc,,\n" +
                       "pkg-1.0.dist-info/RECORD,,\n../../../bin/pkg," + recordHash("#!\n") + ",2\n";
  auto v = viewOf({
      {"usr/local/bin/python3.11", 'f', "ELF"},
      {site + "pkg-1.0.dist-info/METADATA", 'f', "Name: pkg\nVersion: 1.0\nRequires-Dist: absent>=1\n"},
      {site + "pkg-1.0.dist-info/RECORD", 'f', record},
      {site + "pkg/__init__.py", 'f', "print(1)\n"},
      {site + "pkg/mod.py", 'f', "x = 2\n"},
      {site + "pkg/extra.py", 'f', "planted\n"},
      {"usr/local/bin/pkg", 'f', "#!\n"},
  });
  auto envs = discoverEnvironments(v);
  ASSERT_EQ(envs.size(), 1u);
  const Distribution* d = envs[0].find("pkg");
  ASSERT_TRUE(d);
  RecordCheck rc = checkRecord(v, *d);
  EXPECT_EQ(rc.checked, 4u);
  ASSERT_EQ(rc.modified.size(), 1u);
  EXPECT_EQ(rc.modified[0].path, site + "pkg/mod.py");
  ASSERT_EQ(rc.missing.size(), 1u);
  EXPECT_EQ(rc.missing[0].path, site + "pkg/gone.py");
  EXPECT_EQ(rc.unlisted, (std::vector<std::string>{site + "pkg/extra.py"}));
  auto issues = checkContract(envs[0], imageMarkerEnv("3.11", "amd64"));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, ContractIssue::Missing);
}

TEST(PythonEnvironment, WheelTags) {
  EXPECT_TRUE(wheelTagsSupported({"py3-none-any"}, "3.11", "amd64"));
  EXPECT_TRUE(wheelTagsSupported({"cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"}, "3.11.2", "amd64"));
  EXPECT_TRUE(wheelTagsSupported({"cp38-abi3-manylinux_2_28_aarch64"}, "3.11", "arm64"));
  EXPECT_FALSE(wheelTagsSupported({"cp310-cp310-manylinux_2_17_x86_64"}, "3.11", "amd64"));
  EXPECT_FALSE(wheelTagsSupported({"cp311-cp311-manylinux_2_17_aarch64"}, "3.11", "amd64"));
  EXPECT_FALSE(wheelTagsSupported({"cp311-cp311-musllinux_1_1_x86_64"}, "3.11", "amd64"));
  std::string why;
  EXPECT_FALSE(wheelTagsSupported({"py2-none-any"}, "3.11", "amd64", &why));
  EXPECT_NE(why.find("py2-none-any"), std::string::npos);
}

TEST(Dpkg, StatusAndMd5sums) {
  auto pkgs = os::parseDpkgStatus(
      "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.36-9\nSource: glibc\n"
      "Conffiles:\n /etc/ld.so.conf.d/x86_64-linux-gnu.conf d4e7a7b88a71b5ffd9e2644e71a0cfab\n\n"
      "Package: removed\nStatus: deinstall ok config-files\nVersion: 1\n\n");
  ASSERT_EQ(pkgs.size(), 1u);
  EXPECT_EQ(pkgs[0].source, "glibc");
  EXPECT_EQ(pkgs[0].conffiles.at("etc/ld.so.conf.d/x86_64-linux-gnu.conf"), "d4e7a7b88a71b5ffd9e2644e71a0cfab");
  auto sums = os::parseMd5sums("0123456789abcdef0123456789ABCDEF  usr/bin/x\nshort\n");
  EXPECT_EQ(sums.at("usr/bin/x"), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(sums.size(), 1u);
}

TEST(Dpkg, VerifiesLikeDebsums) {
  auto md5 = [](const std::string& s) {
    util::Hasher h("md5");
    h.update(s);
    return h.hex();
  };
  auto v = viewOf({
      {"var/lib/dpkg/status", 'f',
       "Package: tool\nStatus: install ok installed\nVersion: 1\nArchitecture: amd64\n"
       "Conffiles:\n /etc/tool.conf " +
           md5("a=1\n") + "\n\n"},
      {"var/lib/dpkg/info/tool.list", 'f', "/usr/bin/tool\n/usr/share/doc/tool/README\n/etc/tool.conf\n"},
      {"var/lib/dpkg/info/tool.md5sums", 'f',
       md5("good") + "  usr/bin/tool\n" + md5("doc") + "  usr/share/doc/tool/README\n"},
      {"etc/dpkg/dpkg.cfg.d/excludes", 'f', "path-exclude=/usr/share/doc/*\n"},
      {"usr/bin/tool", 'f', "evil"},
      {"etc/tool.conf", 'f', "a=2\n"},
  });
  auto db = os::readDpkg(v);
  ASSERT_TRUE(db.present);
  EXPECT_TRUE(db.owns("usr/bin/tool"));
  ASSERT_EQ(db.modified.size(), 2u);
  EXPECT_EQ(db.modified[0].path, "etc/tool.conf");
  EXPECT_TRUE(db.modified[0].conffile);
  EXPECT_EQ(db.modified[1].path, "usr/bin/tool");
  EXPECT_TRUE(db.missing.empty());  // the README is excluded by path-exclude
}

TEST(PythonEnvironment, SearchReachesUnusualPrefixesAndSaysWhereItDidNotLook) {
  const std::string venv = "home/dev/src/app/.venv/";
  auto v = viewOf({
      {"usr/bin/python3.11", 'f', "ELF"},
      {"usr/lib/python3.11/os.py", 'f', "#"},
      {venv + "pyvenv.cfg", 'f', "home = /usr/bin\nversion = 3.11.2\n"},
      {venv + "bin/python", 'l', "", "/usr/bin/python3.11"},
      {venv + "lib/python3.11/site-packages/attrs-23.1.0.dist-info/METADATA", 'f', "Name: attrs\nVersion: 23.1.0\n"},
      {"srv/mamba/envs/train/conda-meta/history", 'f', ""},
      {"srv/mamba/envs/train/bin/python3.10", 'f', "ELF"},
      {"srv/mamba/envs/train/lib/python3.10/site-packages/numpy-1.26.0.dist-info/METADATA", 'f',
       "Name: numpy\nVersion: 1.26.0\n"},
      {"root/.pyenv/versions/3.12.1/bin/python3.12", 'f', "ELF"},  // a prefix of its own: bin/ and lib/
      {"root/.pyenv/versions/3.12.1/lib/python3.12/site-packages/rich-13.0.0.dist-info/METADATA", 'f',
       "Name: rich\nVersion: 13.0.0\n"},
      {"a/b/c/d/e/f/g/h/pyvenv.cfg", 'f', "version = 3.11.2\n"},  // too deep: reported, not found
      {"proc/1/status", 'f', "x"},
  });
  python::Discovery d = findEnvironments(v, {});
  std::vector<std::string> prefixes;
  for (const auto& e : d.envs) prefixes.push_back(e.kind + " " + e.prefix);
  EXPECT_EQ(prefixes, (std::vector<std::string>{"system usr", "conda srv/mamba/envs/train",
                                                "venv home/dev/src/app/.venv", "prefix root/.pyenv/versions/3.12.1"}));
  EXPECT_TRUE(d.envs[3].find("rich"));
  EXPECT_TRUE(d.envs[2].find("attrs"));
  EXPECT_TRUE(d.envs[1].find("numpy"));
  ASSERT_EQ(d.notSearched.size(), 2u);
  EXPECT_EQ(d.notSearched[0], "/proc");
  EXPECT_NE(d.notSearched[1].find("deeper than 6 levels (e.g. /a/b/c/d/e/f/g"), std::string::npos) << d.notSearched[1];
  EXPECT_TRUE(d.errors.empty());

  // --python: exactly the targets, by interpreter or by root; what is not an environment is named.
  struct Case {
    std::vector<std::string> targets;
    std::vector<std::string> want;  // "kind prefix version"
    size_t errors;
  } cases[] = {
      {{"/home/dev/src/app/.venv/bin/python"}, {"venv home/dev/src/app/.venv 3.11.2"}, 0},
      {{"/a/b/c/d/e/f/g/h/"}, {}, 1},  // a pyvenv.cfg without a lib/pythonX.Y and no version pair: not usable
      {{"/usr/bin/python3.11", "/srv/mamba/envs/train"}, {"system usr 3.11", "conda srv/mamba/envs/train 3.10"}, 0},
      {{"/usr/bin/python3.11", "/usr"}, {"system usr 3.11"}, 0},  // named twice, audited once
      {{"/etc"}, {}, 1},
      {{"/nowhere/bin/python"}, {}, 1},
      {{"/home/dev/src/app/.venv/lib/python3.11/site-packages/attrs-23.1.0.dist-info/METADATA"}, {}, 1},
  };
  for (const auto& c : cases) {
    python::DiscoveryOptions o;
    o.targets = c.targets;
    python::Discovery t = findEnvironments(v, o);
    std::vector<std::string> got;
    for (const auto& e : t.envs) got.push_back(e.kind + " " + e.prefix + " " + e.version);
    EXPECT_EQ(got, c.want) << c.targets[0];
    EXPECT_EQ(t.errors.size(), c.errors) << c.targets[0];
    EXPECT_TRUE(t.notSearched.empty());
  }
}

// The CUDA toolkit's version.json is the image's: a well-formed one gives the toolkit's version,
// one nested past util::kMaxJsonDepth is read as no version (as any malformed one), no tree built.
TEST(ImageCuda, TheToolkitVersionJsonIsReadBounded) {
  auto good = viewOf({{"usr/local/cuda-12.4/version.json", 'f', R"({"cuda":{"name":"CUDA SDK","version":"12.4.1"}})"}});
  EXPECT_EQ(os::readImageCuda(good, {}).toolkit, "12.4.1");
  // 1,000 levels: within the 64 KiB read, past the bound.
  std::string deep = R"({"cuda":{"version":"12.4.1","x":)" + std::string(1000, '[') + std::string(1000, ']') + "}}";
  auto v = viewOf({{"usr/local/cuda-12.4/version.json", 'f', deep}});
  EXPECT_EQ(os::readImageCuda(v, {}).toolkit, "");
}

// What the walk keeps of each file for the Python analysis, by its base name and its parent
// directory's name (taken as views of the path, issue 31): names with no directory, or one, or
// many, at the root and deep down.
TEST(Environment, CaptureLimitByBaseAndParent) {
  const struct {
    const char* path;
    uint64_t limit;
  } cases[] = {
      {"METADATA", 0},
      {"x-1.0.dist-info/METADATA", 16u << 20},
      {"opt/venv/lib/python3.11/site-packages/x-1.0.dist-info/RECORD", 16u << 20},
      {"a/x.egg-info/requires.txt", 16u << 20},
      {"a/x-1.0.dist-info/OTHER", 0},
      {"a/site-packages/x.pth", 1u << 20},
      {"site-packages/x.pth", 1u << 20},
      {"x.pth", 0},
      {"a/site-packages/__editable___x_finder.py", 1u << 20},
      {"a/EGG-INFO/PKG-INFO", 1u << 20},
      {"usr/lib/python3/dist-packages/x.egg-info", 1u << 20},
      {"pyvenv.cfg", 65536},
      {"opt/venv/pyvenv.cfg", 65536},
      {"torch/version.py", 65536},
      {"a/b/torch/version.py", 65536},
      {"version.py", 0},
      {"usr/local/cuda-12.4/version.json", 65536},
      {"version.json", 0},
      {"app/requirements-dev.txt", 1u << 20},
      {"constraints.txt", 1u << 20},
      {"root/.netrc", 65536},
      {"a/b/c.py", 0},
  };
  for (const auto& c : cases) EXPECT_EQ(captureLimit(c.path), c.limit) << c.path;
}

}  // namespace python_environment_test
