// Kernodeck as it ships (issue 41): the two Debian packages cmake/packaging.cmake makes (the
// same CPack configuration scripts/package runs, here over this build) installed with apt into
// a clean Debian 12 container made from the debootstrap fixture, used there and purged; and
// container/Dockerfile built with podman from a Debian base made here, the image then run as its
// non-root user and audited by Kernodeck.
//
// apt inside the containers resolves against this host's package lists and takes the packages
// this host already downloaded (hard links of /var/cache/apt/archives, as
// tests/fixtures/podman-replay-image does); what the host lacks (man-db) comes from Debian's
// mirror, so the containers run with --network host.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "local_registry.h"
#include "no_host_hooks.h"
#include "support.h"

namespace integration_ship_test {

using namespace kdktest;
using nlohmann::json;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kBuild = K.substr(0, K.rfind('/'));
// podman as these test hosts allow it (as gate_pod_test.cc): runc (crun refuses hybrid cgroups
// here) and the ulimits the VM permits.
const std::string kPodman = "--runtime runc";
const std::string kLimits = "--ulimit nofile=4096:4096 --ulimit nproc=4096:4096";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The two packages of this build, made by CPack into BUILD/ship-packages/debs by the first test
// that needs them (under a lock) and reused while nothing they are made of has changed: the
// binaries, the generated pages and completion, the install rules, CPack's configuration, the packaged
// sources and the host's installed packages (dpkg-shlibdeps reads them).
const std::string kSharedPackages =
    "set -e; d=" + kBuild + "/ship-packages; mkdir -p $d; exec 9>$d/.lock; flock 9; "
    "key=$({ cd " + kBuild + " && find kernodeck kernodeck-hook kernodeck-probe libkernodeck_*.so CPackConfig.cmake cmake_install.cmake man "
    "packaging -type f -print0 | sort -z | xargs -0 sha256sum; cd " + SOURCE_DIR + " && find CMakeLists.txt README.md "
    "cmake/packaging.cmake packaging docs hooks examples/demo -type f -print0 | sort -z | xargs -0 sha256sum; "
    "dpkg-query -W; } | sha256sum | cut -c1-64); "
    "if [ \"$(cat $d/key 2>/dev/null)\" != \"$key\" ]; then rm -rf $d/debs $d/key; "
    "cd " + kBuild + " && cpack -G DEB -B $d/debs >$d/cpack.log 2>&1 || { cat $d/cpack.log; exit 1; }; rm -rf $d/debs/_CPack_Packages; "
    "echo \"$key\" >$d/key; fi; ls $d/debs";

class Shipped : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0 || !haveTool("podman") || !haveTool("cpack") || !haveTool("dpkg-shlibdeps") ||
        !haveTool("debootstrap"))
      return;
    dir_ = new std::string(tempDir("ship"));
    // Every podman here reads this containers.conf only: no hooks from a host that has
    // kernodeck-hook registered (issue 51: podman ran the host's hook in the package test).
    writeFile(*dir_ + "/containers.conf", "[engine]\n" + noHostHooks());
    ::setenv("CONTAINERS_CONF", (*dir_ + "/containers.conf").c_str(), 1);
    // The packages: CPack over this build (stripped copies; Depends from dpkg-shlibdeps), made
    // once per build for all the tests here (each runs in a process of its own under ctest).
    RunResult p = run(kSharedPackages);
    if (p.code != 0) {
      why_ = "cpack failed: " + p.out + p.err;
      return;
    }
    pkgs_ = new std::string(kBuild + "/ship-packages/debs");
    debs_ = new std::string(p.out);
    // The clean Debian 12 root file system (cached debootstrap fixture).
    RunResult base = run(std::string(SOURCE_DIR) + "/tests/fixtures/debootstrap-python");
    if (base.code != 0) {
      why_ = "debootstrap fixture: " + base.err;
      return;
    }
    base_ = new std::string(base.out.substr(0, base.out.find('\n')));
    ready_ = true;
  }
  static void TearDownTestSuite() {
    if (dir_) run("umount " + *dir_ + "/rootfs/proc 2>/dev/null; true");
  }
  void SetUp() override {
    if (!dir_) GTEST_SKIP() << "needs root, podman, cpack, dpkg-shlibdeps and debootstrap";
    ASSERT_TRUE(ready_) << why_;
  }

  // The Debian base of a Dockerfile build, made here: the fixture with this host's apt lists (and
  // sources), imported straight from one tar stream (no copy of the fixture first). With dpkg's
  // force-unsafe-io, as Docker's own debian images carry it (docker-apt-speedup): no fsync per
  // unpacked file, a third of the LibTorch install's time in these builds.
  static RunResult importDebianBase(const std::string& name) {
    std::string speedup = *dir_ + "/speedup";
    run("mkdir -p " + speedup + "/etc/dpkg/dpkg.cfg.d");
    writeFile(speedup + "/etc/dpkg/dpkg.cfg.d/docker-apt-speedup", "force-unsafe-io\n");
    return run("host=var/lib/apt/lists; skip=; [ ! -d /etc/apt/sources.list.d ] || host=\"$host etc/apt/sources.list.d\"; "
               "[ ! -e /etc/apt/sources.list ] || { host=\"$host etc/apt/sources.list\"; skip=--exclude=./etc/apt/sources.list; }; "
               "tar -C " + *base_ + " --exclude=./opt/venv --exclude=./.complete --exclude=./var/lib/apt/lists "
               "--exclude=./etc/apt/sources.list.d $skip --exclude='./var/cache/apt/archives/*.deb' -cf - . -C / $host -C " +
               speedup + " etc/dpkg/dpkg.cfg.d/docker-apt-speedup | podman import -q - " + name + " >/dev/null");
  }

  static std::string* dir_;
  static std::string* pkgs_;  // the folder of the shared packages
  static std::string* debs_;
  static std::string* base_;
  static std::string why_;
  static bool ready_;
};

std::string* Shipped::dir_ = nullptr;
std::string* Shipped::pkgs_ = nullptr;
std::string* Shipped::debs_ = nullptr;
std::string* Shipped::base_ = nullptr;
std::string Shipped::why_;
bool Shipped::ready_ = false;

// What runs inside the package test's container; each step prints a marker line the test looks for.
const char* kInstallUsePurge = R"sh(set -e
export DEBIAN_FRONTEND=noninteractive
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/docker-apt-speedup  # as Docker's debian images: no fsync per file
apt-get install -y -q --no-install-recommends /debs/kernodeck_*.deb /debs/kernodeck-hook_*.deb man-db \
  > /tmp/apt.log 2>&1 || { tail -40 /tmp/apt.log; exit 10; }
echo "== depends: $(dpkg-query -W -f '${Depends}' kernodeck) | hook: $(dpkg-query -W -f '${Depends}' kernodeck-hook)"
echo "== without plugins"; kernodeck version
apt-get install -y -q --no-install-recommends /debs/kernodeck-rpm_*.deb /debs/kernodeck-torch_*.deb \
  > /tmp/apt.log 2>&1 || { tail -40 /tmp/apt.log; exit 10; }
echo "== version"; kernodeck version
echo "== audit"; set +e; kernodeck audit oci:/usr/share/doc/kernodeck/examples/demo-oci:1.0; echo "== audit exit $?"; set -e
echo "== hook"; kernodeck-hook --version
echo "== man"; man kernodeck-audit 2>&1 | col -b | head -40
echo "== man8"; man 8 kernodeck-hook 2>&1 | col -b | head -5
echo "== completion"; bash -c 'source /usr/share/bash-completion/completions/kernodeck && complete -p kernodeck'
dpkg -L kernodeck kernodeck-hook kernodeck-rpm kernodeck-torch > /tmp/owned
echo "== owned $(wc -l < /tmp/owned)"
apt-get purge -y -q kernodeck kernodeck-hook kernodeck-rpm kernodeck-torch > /tmp/purge.log 2>&1 || { tail -20 /tmp/purge.log; exit 11; }
echo "== purged"
while read -r f; do [ -d "$f" ] && [ ! -L "$f" ] && continue; if [ -e "$f" ] || [ -L "$f" ]; then echo "LEFT $f"; fi; done < /tmp/owned
for d in /usr/lib/kernodeck /usr/share/doc/kernodeck /usr/share/doc/kernodeck-hook /usr/share/kernodeck-hook; do
  [ ! -e "$d" ] || echo "LEFT $d"; done
# Every other file named after them; not /var/cache/man, man-db's cache of the pages `man` formatted
# above, which man-db's own daily job drops once the page is gone.
find / -xdev \( -path /debs -o -path /example -o -path /var/cache/man \) -prune -o -name '*kernodeck*' -print | sed 's/^/LEFT /'
dpkg -s kernodeck >/dev/null 2>&1 && echo "LEFT dpkg status kernodeck"
echo "== end"
)sh";

TEST_F(Shipped, PackagesInstallWorkAndPurgeInACleanDebianContainer) {
  EXPECT_NE(debs_->find("kernodeck_0.1.0_amd64.deb"), std::string::npos) << *debs_;
  EXPECT_NE(debs_->find("kernodeck-hook_0.1.0_amd64.deb"), std::string::npos) << *debs_;
  // The hook package has no dependency at all; the CLI's come from dpkg-shlibdeps (libc6, libssl3, ...).
  RunResult dep = run("dpkg-deb -f " + *pkgs_ + "/kernodeck-hook_0.1.0_amd64.deb Depends; echo; dpkg-deb -f " +
                      *pkgs_ + "/kernodeck_0.1.0_amd64.deb Depends");
  EXPECT_EQ(dep.out.substr(0, dep.out.find('\n')), "") << dep.out;
  for (const char* lib :
       {"libc6", "libstdc++6", "libssl3", "libboost-program-options1.74.0", "libarchive13", "libcurl4"})
    EXPECT_NE(dep.out.find(lib), std::string::npos) << lib << " missing from Depends: " << dep.out;
  // Issue 51 §2: the CLI depends on neither LibTorch nor librpm; each plugin's package does, and
  // the CLI recommends them.
  for (const char* lib : {"librpm", "libtorch"}) EXPECT_EQ(dep.out.find(lib), std::string::npos) << dep.out;
  RunResult plugins = run("cd " + *pkgs_ + " && dpkg-deb -f kernodeck_0.1.0_amd64.deb Recommends && dpkg-deb -f "
                          "kernodeck-rpm_0.1.0_amd64.deb Depends && dpkg-deb -f kernodeck-torch_0.1.0_amd64.deb Depends");
  ASSERT_EQ(plugins.code, 0) << plugins.err;
  EXPECT_NE(plugins.out.find("kernodeck-rpm (= 0.1.0), kernodeck-torch (= 0.1.0)"), std::string::npos) << plugins.out;
  EXPECT_NE(plugins.out.find("librpm9"), std::string::npos) << plugins.out;
  EXPECT_NE(plugins.out.find("libtorch1.13"), std::string::npos) << plugins.out;
  std::string example = *dir_ + "/example";
  ASSERT_EQ(run(std::string(MKIMAGE_BIN) + " " + SOURCE_DIR + "/examples/demo/image.json " + example).code, 0);
  // The fixture itself as the container's root, under an overlay (what the container writes goes
  // to a layer podman drops afterwards), with this host's package lists (an overlay too) and
  // sources, and a hard-linked copy of the packages this host downloaded.
  std::string archives = *dir_ + "/pkg-archives";
  ASSERT_EQ(run("{ cp -al /var/cache/apt/archives " + archives + " 2>/dev/null || mkdir -p " + archives + "; } && rm -rf " +
                archives + "/partial " + archives + "/lock && mkdir -p " + archives + "/partial")
                .code,
            0);
  std::string sources;
  if (exists("/etc/apt/sources.list.d")) sources += " -v /etc/apt/sources.list.d:/etc/apt/sources.list.d:ro";
  if (exists("/etc/apt/sources.list")) sources += " -v /etc/apt/sources.list:/etc/apt/sources.list:ro";
  writeFile(*dir_ + "/install-use-purge.sh", kInstallUsePurge);
  RunResult r = run("timeout 900 podman " + kPodman + " run --rm --network host " + kLimits + " -v " + *pkgs_ +
                    ":/debs:ro -v " + example + ":/example:ro -v " + *dir_ +
                    "/install-use-purge.sh:/run-test.sh:ro -v /var/lib/apt/lists:/var/lib/apt/lists:O" + sources + " -v " +
                    archives + ":/var/cache/apt/archives --rootfs " + *base_ + ":O /bin/bash /run-test.sh");
  std::string o = r.out + r.err;
  ASSERT_EQ(r.code, 0) << o;
  // Without the plugin packages the CLI says which package brings what back.
  std::string bare = o.substr(o.find("== without plugins"), o.find("== version") - o.find("== without plugins"));
  EXPECT_NE(bare.find("install the kernodeck-rpm package"), std::string::npos) << bare;
  EXPECT_NE(bare.find("install the kernodeck-torch package"), std::string::npos) << bare;
  // The plugins were found in /usr/lib/kernodeck (kernodeck version loads both).
  EXPECT_NE(o.find("kernodeck 0.1.0 (analysis"), std::string::npos) << o;
  EXPECT_NE(o.find("librpm 4.18"), std::string::npos) << o;
  EXPECT_NE(o.find("(plugin)"), std::string::npos) << o;
  EXPECT_NE(o.find("libtorch 1.13"), std::string::npos) << o;
  // The README's first audit, of the demo image the package ships as an OCI layout, as it audits
  // from the build: its digest, its credential, exit 1.
  EXPECT_NE(o.find("sha256:af5951c6300fca3ed198df66e6a1f13ae55cecf7d88c6304f9d352437557a749"), std::string::npos) << o;
  EXPECT_NE(o.find("image.secret.env"), std::string::npos) << o;
  EXPECT_NE(o.find("== audit exit 1"), std::string::npos) << o;
  EXPECT_NE(o.find("kernodeck-hook 0.1.0"), std::string::npos) << o;
  std::string man = o.substr(o.find("== man"));
  EXPECT_NE(man.find("KERNODECK-AUDIT(1)"), std::string::npos) << man;
  EXPECT_NE(man.find("--fail-on"), std::string::npos) << man;
  EXPECT_NE(man.find("KERNODECK-HOOK(8)"), std::string::npos) << man;
  EXPECT_NE(o.find("complete -o filenames -F _kernodeck kernodeck"), std::string::npos) << o;
  EXPECT_NE(o.find("== purged"), std::string::npos) << o;
  EXPECT_EQ(o.find("LEFT "), std::string::npos) << o;
  EXPECT_NE(o.find("== end"), std::string::npos) << o;
}

// What runs inside the hook package's container (issue 51 §1), as a node's administrator does it:
// the package installed, the hook registered through hooks.d, a container started by podman (in
// this container: runc, cgroupfs, vfs storage, a busybox root), the package upgraded, a CDI install
// that fails, then purge. Each step prints a marker line the test looks for.
const char* kHookLife = R"sh(set -u
export DEBIAN_FRONTEND=noninteractive
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/docker-apt-speedup
apt-get install -y -q --no-install-recommends /debs/kernodeck-hook_*.deb podman runc conmon busybox-static \
  > /tmp/apt.log 2>&1 || { tail -40 /tmp/apt.log; exit 10; }
mkdir -p /etc/containers /srv/root/bin
printf '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nruntime = "runc"\n' > /etc/containers/containers.conf
printf '[storage]\ndriver = "vfs"\nrunroot = "/run/containers/storage"\ngraphroot = "/var/lib/containers/storage"\n' \
  > /etc/containers/storage.conf
cp /bin/busybox /srv/root/bin/busybox
start() { podman run --rm --network none --rootfs /srv/root /bin/busybox true > /tmp/start.log 2>&1; echo "== start $1 exit $?"; cat /tmp/start.log; }
log=/var/log/kernodeck/hook.log
lines() { [ -f $log ] && wc -l < $log || echo 0; }
start bare
echo "== conffiles $(dpkg-query -W -f '${Conffiles}' kernodeck-hook | tr -s ' \n' ' ')"
kernodeck-hook install --policy warn; echo "== install exit $?"
echo "== registered $(grep -o '"path": *"[^"]*"' /etc/containers/oci/hooks.d/kernodeck-hook.json)"
start registered; echo "== log lines $(lines)"; tail -1 $log
apt-get install -y -q /upgrade/kernodeck-hook_*.deb > /tmp/apt2.log 2>&1 || { tail -20 /tmp/apt2.log; exit 11; }
echo "== upgraded to $(dpkg-query -W -f '${Version}' kernodeck-hook): $(kernodeck-hook --version)"
start upgraded; echo "== log lines $(lines)"; tail -1 $log
cp /etc/containers/oci/hooks.d/kernodeck-hook.json /tmp/before.json
kernodeck-hook install --policy enforce --cdi-inject /etc/cdi/nvidia.yaml; echo "== failed cdi exit $?"
cmp -s /tmp/before.json /etc/containers/oci/hooks.d/kernodeck-hook.json && echo "== hooks.d kept"
start after-failed-cdi; echo "== log lines $(lines)"
apt-get purge -y -q kernodeck-hook > /tmp/purge.log 2>&1 || { tail -20 /tmp/purge.log; exit 12; }
echo "== purged"
# Not /srv/root: the test containers' own root (podman --rootfs shares it), where the hook wrote
# each container's host record (/run/kernodeck/host.json) inside the container, as it should.
find / -xdev \( -path /debs -o -path /upgrade -o -path /srv/root \) -prune -o -name '*kernodeck*' -print | sed 's/^/LEFT /'
[ -f /srv/root/run/kernodeck/host.json ] && echo "== host record written in the container"
start purged
echo "== end"
)sh";

// Issue 51 §1: the hook's life on a node follows its package. The upgrade is this build's package
// rebuilt as 0.1.1 (repacked by dpkg-deb, its binary's version string patched, so that the log
// line says which binary ran).
TEST_F(Shipped, TheHookIsRegisteredUpgradedAndPurgedWithItsPackage) {
  std::string up = *dir_ + "/upgrade", root = *dir_ + "/upgrade-root";
  RunResult repack = run(
      "set -e; rm -rf " + up + " " + root + "; mkdir -p " + up + "; dpkg-deb -R " + *pkgs_ + "/kernodeck-hook_0.1.0_amd64.deb " +
      root + "; python3 -c \"import sys; p=sys.argv[1]; b=open(p,'rb').read(); n=b.count(b'\\x000.1.0\\x00'); "
      "assert n >= 1, n; open(p,'wb').write(b.replace(b'\\x000.1.0\\x00', b'\\x000.1.1\\x00'))\" " + root +
      "/usr/bin/kernodeck-hook; sed -i 's/^Version: .*/Version: 0.1.1/' " + root + "/DEBIAN/control; cd " + root +
      " && sed -i \"s|^[0-9a-f]*  usr/bin/kernodeck-hook\\$|$(md5sum usr/bin/kernodeck-hook)|\" DEBIAN/md5sums && "
      "usr/bin/kernodeck-hook --version && dpkg-deb --root-owner-group -b " + root + " " + up + "/kernodeck-hook_0.1.1_amd64.deb >/dev/null");
  ASSERT_EQ(repack.code, 0) << repack.out << repack.err;
  ASSERT_EQ(repack.out, "kernodeck-hook 0.1.1\n");
  std::string archives = *dir_ + "/hook-archives";
  ASSERT_EQ(run("{ cp -al /var/cache/apt/archives " + archives + " 2>/dev/null || mkdir -p " + archives + "; } && rm -rf " +
                archives + "/partial " + archives + "/lock && mkdir -p " + archives + "/partial")
                .code,
            0);
  std::string sources;
  if (exists("/etc/apt/sources.list.d")) sources += " -v /etc/apt/sources.list.d:/etc/apt/sources.list.d:ro";
  if (exists("/etc/apt/sources.list")) sources += " -v /etc/apt/sources.list:/etc/apt/sources.list:ro";
  writeFile(*dir_ + "/hook-life.sh", kHookLife);
  // Privileged: podman runs containers inside this one.
  RunResult r = run("timeout 600 podman " + kPodman + " run --rm --privileged --network host " + kLimits + " -v " + *pkgs_ +
                    ":/debs:ro -v " + up + ":/upgrade:ro -v " + *dir_ + "/hook-life.sh:/run-test.sh:ro" +
                    " -v /var/lib/apt/lists:/var/lib/apt/lists:O" + sources + " -v " + archives +
                    ":/var/cache/apt/archives --rootfs " + *base_ + ":O /bin/bash /run-test.sh");
  std::string o = r.out + r.err;
  ASSERT_EQ(r.code, 0) << o;
  auto after = [&](const std::string& marker) {
    size_t at = o.find(marker);
    return at == std::string::npos ? std::string() : o.substr(at);
  };
  EXPECT_NE(o.find("== start bare exit 0"), std::string::npos) << o;
  EXPECT_NE(o.find("== conffiles  /etc/default/kernodeck-hook "), std::string::npos) << o;
  EXPECT_NE(o.find("== install exit 0"), std::string::npos) << o;
  // The package's own binary is what runtimes run: no copy for an upgrade to miss.
  EXPECT_NE(o.find("== registered \"path\": \"/usr/bin/kernodeck-hook\""), std::string::npos) << o;
  EXPECT_NE(o.find("== start registered exit 0"), std::string::npos) << o;
  std::string registered = after("== start registered exit 0");
  EXPECT_EQ(registered.find("== log lines 1\n"), registered.find("== log lines")) << o;
  EXPECT_NE(registered.find("\"hook_version\":\"0.1.0\""), std::string::npos) << o;
  // The upgrade reaches the running hook: the next container start runs 0.1.1.
  EXPECT_NE(o.find("== upgraded to 0.1.1: kernodeck-hook 0.1.1"), std::string::npos) << o;
  std::string upgraded = after("== start upgraded exit 0");
  EXPECT_EQ(upgraded.find("== log lines 2\n"), upgraded.find("== log lines")) << o;
  EXPECT_NE(upgraded.find("\"hook_version\":\"0.1.1\""), std::string::npos) << o;
  // A CDI install that fails (no spec) keeps the hooks.d route, which still runs.
  EXPECT_NE(o.find("== failed cdi exit 3"), std::string::npos) << o;
  EXPECT_NE(o.find("== hooks.d kept"), std::string::npos) << o;
  std::string failed = after("== start after-failed-cdi exit 0");
  EXPECT_EQ(failed.find("== log lines 3\n"), failed.find("== log lines")) << o;
  // Purge leaves nothing, and a container starts with no hook and no error.
  EXPECT_NE(o.find("== purged"), std::string::npos) << o;
  EXPECT_EQ(o.find("LEFT "), std::string::npos) << o;
  EXPECT_NE(o.find("== host record written in the container"), std::string::npos) << o;
  EXPECT_NE(o.find("== start purged exit 0\n== end"), std::string::npos) << o;
}

TEST_F(Shipped, TheDockerfileBuildsAnImageThatRunsAsNonRootAndAuditsItselfWithoutAnError) {
  std::string tag = "kdkship" + std::to_string(::getpid());
  std::string base = "localhost/" + tag + "-debian:12", image = "localhost/" + tag + "-kernodeck:1";
  ASSERT_EQ(importDebianBase(base).code, 0);
  // The packages stage replaced by the packages built above (--build-context packages=DIR with
  // DIR/debs/); the host's downloaded packages lent to apt through a hard-linked copy.
  std::string ctx = *dir_ + "/packages";
  std::string archives = *dir_ + "/archives";
  ASSERT_EQ(run("mkdir -p " + ctx + " && cp -a " + *pkgs_ + " " + ctx + "/debs && { cp -al /var/cache/apt/archives " +
                archives + " 2>/dev/null || mkdir -p " + archives + "; } && rm -rf " + archives + "/partial " + archives +
                "/lock && mkdir -p " + archives + "/partial")
                .code,
            0);
  RunResult b = run("cd " + std::string(SOURCE_DIR) + " && timeout 900 podman --runtime runc build -q --network host " + kLimits + " --build-arg BASE=" +
                    base + " --build-context packages=" + ctx + " -v " + archives +
                    ":/var/cache/apt/archives -f container/Dockerfile -t " + image + " . 2>&1");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  auto inImage = [&](const std::string& args) {
    return run("podman " + kPodman + " run --rm --network none " + kLimits + " " + args);
  };
  RunResult who = inImage("--entrypoint /usr/bin/id " + image + " -u");
  EXPECT_EQ(who.out, "65532\n") << who.err;
  RunResult gate = inImage(image + " gate --help");
  EXPECT_EQ(gate.code, 0) << gate.err;
  EXPECT_NE(gate.out.find("--key FILE"), std::string::npos) << gate.out;
  // The static probe the init-container manifest copies, where it copies it from.
  std::string manifest = readFile(std::string(SOURCE_DIR) + "/container/k8s/init-container.yaml");
  ASSERT_NE(manifest.find("\"/usr/local/bin/kernodeck-probe\""), std::string::npos);
  RunResult probe = inImage("--entrypoint /bin/sh " + image +
                            " -c 'cp /usr/local/bin/kernodeck-probe /tmp/p && ldd /tmp/p; /tmp/p --help | head -1'");
  EXPECT_NE((probe.out + probe.err).find("not a dynamic executable"), std::string::npos) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("usage: kernodeck-probe"), std::string::npos) << probe.out << probe.err;
  // kernodeck audit as the image's user (65532: a cache under its HOME is not there to write).
  std::string example = *dir_ + "/image-example";
  ASSERT_EQ(run(std::string(MKIMAGE_BIN) + " " + SOURCE_DIR + "/examples/demo/image.json " + example).code, 0);
  ASSERT_EQ(run("chmod -R a+rX " + *dir_).code, 0);
  RunResult audit = inImage("-v " + example + ":/example:ro " + image + " audit --no-cache oci:/example:1.0");
  EXPECT_EQ(audit.code, 1) << audit.out << audit.err;
  EXPECT_NE(audit.out.find("image.secret.env"), std::string::npos) << audit.out << audit.err;
  // The image, saved as an OCI layout (its layers uncompressed: compressing a gigabyte to read
  // it back once is most of a save's time), audited by this build: no error finding.
  std::string layout = *dir_ + "/image";
  ASSERT_EQ(run("podman save -q --format oci-dir --uncompressed -o " + layout + " " + image).code, 0);
  RunResult a = run(K + " audit --no-cache --fail-on error oci:" + layout + " 2>&1");
  EXPECT_EQ(a.code, 0) << a.out;
  EXPECT_NE(a.out.find("Debian GNU/Linux 12"), std::string::npos) << a.out;
  RunResult size = run("podman image inspect " + image + " --format '{{.Size}}'");
  std::printf("kernodeck image size: %s bytes (%s)\n", replaceAll(size.out, "\n", "").c_str(), image.c_str());

  // Issue 51 §2: the gate image, the Dockerfile's target `gate`, from the same packages: at most
  // 150 MB uncompressed, running as 65532, and `gate` against a real registry: a passing signed
  // report lets it through, an image without one does not.
  std::string gateImage = "localhost/" + tag + "-gate:1";
  RunResult g = run("cd " + std::string(SOURCE_DIR) + " && timeout 900 podman --runtime runc build -q --network host " +
                    kLimits + " --target gate --build-arg BASE=" + base + " --build-context packages=" + ctx + " -v " +
                    archives + ":/var/cache/apt/archives -f container/Dockerfile -t " + gateImage + " . 2>&1");
  ASSERT_EQ(g.code, 0) << g.out << g.err;
  RunResult gateSize = run("podman image inspect " + gateImage + " --format '{{.Size}} {{.Config.User}}'");
  std::printf("kernodeck gate image size: %s (%s)\n", replaceAll(gateSize.out, "\n", "").c_str(), gateImage.c_str());
  long long gateBytes = std::atoll(gateSize.out.c_str());
  EXPECT_GT(gateBytes, 0) << gateSize.out << gateSize.err;
  EXPECT_LE(gateBytes, 150LL * 1000 * 1000) << "the gate image is " << gateBytes << " bytes";
  EXPECT_NE(gateSize.out.find(" 65532:65532"), std::string::npos) << gateSize.out;
  LocalRegistry reg;
  ASSERT_TRUE(reg.start()) << "docker-registry did not start";
  std::string key = *dir_ + "/gate-key";
  ASSERT_EQ(run("mkdir -p " + key + " && openssl genpkey -algorithm ed25519 -out " + key + "/key.pem && openssl pkey -in " +
                key + "/key.pem -pubout -out " + key + "/audit.pub && chmod -R a+rX " + key)
                .code,
            0);
  json spec = {{"tag", "1"},
               {"config", {{"Env", {"PATH=/bin"}}}},
               {"layers", json::array({{{"compression", "gzip"},
                                        {"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=gatetest\n"}}})}}})}};
  mkimage(spec, *dir_ + "/gate-ok");
  spec["layers"][0]["entries"][0]["content"] = "ID=gatetest2\n";
  mkimage(spec, *dir_ + "/gate-unattested");
  ASSERT_TRUE(reg.push(*dir_ + "/gate-ok", "1", "team/ok:1"));
  ASSERT_TRUE(reg.push(*dir_ + "/gate-unattested", "1", "team/unattested:1"));
  RunResult attach = run(K + " audit --no-cache --attach --sign-key " + key + "/key.pem " + reg.host() + "/team/ok:1 2>&1");
  ASSERT_EQ(attach.code, 0) << attach.out;
  auto gateOn = [&](const std::string& repo) {
    std::string ref = reg.host() + "/team/" + repo + "@" + reg.digestOf("team/" + repo + ":1");
    return run("podman " + kPodman + " run --rm --network host --read-only " + kLimits + " -e KERNODECK_IMAGE=" + ref +
               " -v " + key + ":/etc/kernodeck/key:ro " + gateImage + " gate --key /etc/kernodeck/key/audit.pub");
  };
  RunResult pass = gateOn("ok");
  EXPECT_EQ(pass.code, 0) << pass.out << pass.err;
  RunResult refuse = gateOn("unattested");
  EXPECT_NE(refuse.code, 0) << refuse.out << refuse.err;
  EXPECT_NE(refuse.code, 125) << refuse.out << refuse.err;  // podman's own failure is not the gate's refusal
  // The gate image has no LibTorch and no shell.
  EXPECT_NE(inImage("--entrypoint /bin/sh " + gateImage + " -c true").code, 0);
  run("podman rmi -f " + image + " " + gateImage + " " + base + " >/dev/null 2>&1");
}

// Issue 51 §2: the Dockerfile's two stages for real, the packages built inside the first one from
// this tree (not the --build-context shortcut the test above takes). The packages stage compiles
// the whole project in Release: longer on two cores than scripts/test's 15 minutes allow, so it
// runs only when KERNODECK_DOCKERFILE_FROM_SOURCE=1 is set (and skips, saying so, otherwise).
TEST_F(Shipped, TheDockerfileBuildsFromSource) {
  const char* env = std::getenv("KERNODECK_DOCKERFILE_FROM_SOURCE");
  if (!env || std::string(env) != "1")
    GTEST_SKIP() << "set KERNODECK_DOCKERFILE_FROM_SOURCE=1: the packages stage compiles the whole project "
                    "(beyond scripts/test's 15 minutes on two cores)";
  std::string tag = "kdksrc" + std::to_string(::getpid());
  std::string base = "localhost/" + tag + "-debian:12", gateImage = "localhost/" + tag + "-gate:1";
  ASSERT_EQ(importDebianBase(base).code, 0);
  std::string archives = *dir_ + "/src-archives";
  ASSERT_EQ(run("{ cp -al /var/cache/apt/archives " + archives + " 2>/dev/null || mkdir -p " + archives + "; } && rm -rf " +
                archives + "/partial " + archives + "/lock && mkdir -p " + archives + "/partial")
                .code,
            0);
  auto t0 = std::chrono::steady_clock::now();
  RunResult b = run("cd " + std::string(SOURCE_DIR) + " && timeout 5400 podman --runtime runc build -q --network host " +
                    kLimits + " --target gate --build-arg BASE=" + base + " -v " + archives +
                    ":/var/cache/apt/archives -f container/Dockerfile -t " + gateImage + " . 2>&1");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  std::printf("the two-stage build from source took %lld s\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0).count()));
  RunResult help = run("podman " + kPodman + " run --rm --network none " + kLimits + " " + gateImage + " gate --help");
  EXPECT_EQ(help.code, 0) << help.out << help.err;
  EXPECT_NE(help.out.find("--key FILE"), std::string::npos) << help.out;
  run("podman rmi -f " + gateImage + " " + base + " >/dev/null 2>&1");
}

// Issue 42 section 3: the image init-container.yaml names by digest is an index with linux/amd64
// and linux/arm64 entries, each built from container/Dockerfile as the Dockerfile's header says
// (podman build --platform P --manifest LIST, the packages of both architectures in one folder),
// on Debian bases made here (the amd64 fixture; debootstrap --arch arm64 through qemu).
TEST_F(Shipped, TheDockerfileBuildsOneIndexForAmd64AndArm64NodesThatAuditsClean) {
  // The arm64 packages come from the whole arm64 cross build (scripts/build --arch arm64):
  // scripts/test cross-builds only the hook and the probe, so this runs where that build is.
  const char* env = std::getenv("KERNODECK_ARM64_BUILD");
  std::string arm = env && *env ? env : std::string(SOURCE_DIR) + "/build-arm64";
  if (!haveTool("qemu-aarch64-static") || ::access((arm + "/kernodeck").c_str(), X_OK) != 0 ||
      ::access((arm + "/man/.stamp").c_str(), F_OK) != 0)
    GTEST_SKIP() << "needs the whole arm64 cross build (kernodeck and its man pages) in " << arm
                 << ": scripts/build --arch arm64 (scripts/test cross-builds only kernodeck-hook and kernodeck-probe)";
  RunResult binfmt = run(std::string(SOURCE_DIR) + "/tests/fixtures/binfmt-arm64");
  ASSERT_EQ(binfmt.code, 0) << binfmt.err;
  // Both architectures' packages in one folder, as the Dockerfile's header builds them.
  std::string ctx = *dir_ + "/packages2";
  RunResult p = run("mkdir -p " + ctx + " && cp -a " + *pkgs_ + " " + ctx + "/debs && cd " + arm +
                    " && cmake --build . --target kernodeck kernodeck-hook kernodeck-probe man_pages >/dev/null && cpack -G DEB -B " +
                    ctx + "/debs 2>&1 && rm -rf " + ctx + "/debs/_CPack_Packages && ls " + ctx + "/debs");
  ASSERT_EQ(p.code, 0) << p.out << p.err;
  EXPECT_NE(p.out.find("kernodeck_0.1.0_arm64.deb"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("kernodeck-hook_0.1.0_arm64.deb"), std::string::npos) << p.out;
  // The arm64 hook package has no dependency either; the arm64 CLI's are arm64 libraries read by
  // dpkg-shlibdeps (no LibTorch: the arm64 build has no plugin).
  RunResult dep = run("cd " + ctx + "/debs && dpkg-deb -f kernodeck-hook_0.1.0_arm64.deb Architecture Depends; "
                      "dpkg-deb -f kernodeck_0.1.0_arm64.deb Architecture Depends; dpkg-deb -c kernodeck_0.1.0_arm64.deb");
  EXPECT_EQ(dep.out.substr(0, dep.out.find('\n')), "Architecture: arm64") << dep.out;
  EXPECT_NE(dep.out.find("libcurl4"), std::string::npos) << dep.out;
  EXPECT_NE(dep.out.find("libssl3"), std::string::npos) << dep.out;
  EXPECT_EQ(dep.out.find("libtorch"), std::string::npos) << dep.out;
  EXPECT_NE(dep.out.find("./usr/share/man/man1/kernodeck-audit.1.gz"), std::string::npos) << dep.out;

  // The two bases: each a Debian 12 root file system with this host's apt lists (which hold
  // arm64's too, the host having that architecture for the cross build), imported for its platform.
  RunResult armBase = run(std::string(SOURCE_DIR) + "/tests/fixtures/debootstrap-arm64");
  ASSERT_EQ(armBase.code, 0) << armBase.err;
  std::string tag = "kdkindex" + std::to_string(::getpid());
  std::string list = "localhost/" + tag + "-kernodeck:1";
  auto importBase = [&](const std::string& from, const std::string& arch) {
    std::string root = *dir_ + "/base-" + arch, name = "localhost/" + tag + "-debian-" + arch + ":12";
    std::string copy = "rm -rf " + root + " && cp -a " + from + " " + root + " && rm -rf " + root + "/opt/venv " + root +
                       "/var/lib/apt/lists && cp -a /var/lib/apt/lists " + root + "/var/lib/apt/lists && rm -rf " + root +
                       "/etc/apt/sources.list.d && { [ ! -e /etc/apt/sources.list ] || cp -a /etc/apt/sources.list " + root +
                       "/etc/apt/; } && { [ ! -d /etc/apt/sources.list.d ] || cp -a /etc/apt/sources.list.d " + root +
                       "/etc/apt/; } && echo force-unsafe-io > " + root + "/etc/dpkg/dpkg.cfg.d/docker-apt-speedup && rm -f " + root +
                       "/.complete && tar -C " + root + " -cf " + root + ".tar . && podman import -q --arch " +
                       arch + " --os linux " + root + ".tar " + name + " >/dev/null && rm -rf " + root + " " + root + ".tar";
    RunResult r = run(copy);
    EXPECT_EQ(r.code, 0) << r.err;
    return name;
  };
  std::string amd64Base = importBase(*base_, "amd64"), arm64Base = importBase(armBase.out.substr(0, armBase.out.find('\n')), "arm64");
  std::string archives = *dir_ + "/archives2";
  ASSERT_EQ(run("{ cp -al /var/cache/apt/archives " + archives + " 2>/dev/null || mkdir -p " + archives + "; } && rm -rf " +
                archives + "/partial " + archives + "/lock && mkdir -p " + archives + "/partial")
                .code,
            0);
  std::map<std::string, std::string> built;  // platform -> image id (podman build -q prints it last)
  for (auto [platform, base] : {std::pair{std::string("linux/amd64"), amd64Base}, std::pair{std::string("linux/arm64"), arm64Base}}) {
    RunResult b = run("cd " + std::string(SOURCE_DIR) + " && timeout 1200 podman --runtime runc build -q --network host " + kLimits +
                      " --platform " + platform + " --manifest " + list + " --build-arg BASE=" + base + " --build-context packages=" +
                      ctx + " -v " + archives + ":/var/cache/apt/archives -f container/Dockerfile . 2>&1");
    ASSERT_EQ(b.code, 0) << platform << ": " << b.out << b.err;
    std::string out = b.out.substr(0, b.out.find_last_not_of("\n") + 1);
    built[platform] = out.substr(out.rfind('\n') + 1);
  }
  // The arm64 entry runs, through qemu: its gate, and its static aarch64 probe.
  auto inArm64 = [&](const std::string& args) {
    return run("podman " + kPodman + " run --rm --network none --platform linux/arm64 " + kLimits + " " + args);
  };
  std::string arm64Image = built["linux/arm64"];
  RunResult gate = inArm64(arm64Image + " gate --help");
  EXPECT_EQ(gate.code, 0) << gate.out << gate.err;
  EXPECT_NE(gate.out.find("--key FILE"), std::string::npos) << gate.out << gate.err;
  RunResult probe = inArm64("--entrypoint /bin/sh " + arm64Image +
                            " -c 'uname -m; /usr/local/bin/kernodeck-probe --version; id -u; ldd /usr/local/bin/kernodeck-probe 2>&1'");
  EXPECT_NE(probe.out.find("aarch64\n"), std::string::npos) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("kernodeck-probe 0.1.0"), std::string::npos) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("65532\n"), std::string::npos) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("not a dynamic executable"), std::string::npos) << probe.out << probe.err;

  // The index, pushed as an OCI layout: two entries, one per platform, under one digest.
  std::string layout = *dir_ + "/index";
  RunResult push = run("podman manifest push -q --all " + list + " oci:" + layout + ":1 2>&1");
  ASSERT_EQ(push.code, 0) << push.out << push.err;
  json top = json::parse(readFile(layout + "/index.json"));
  ASSERT_EQ(top["manifests"].size(), 1u) << top.dump();
  std::string indexDigest = top["manifests"][0]["digest"].get<std::string>();
  json index = json::parse(readFile(layout + "/blobs/sha256/" + indexDigest.substr(7)));
  std::set<std::string> platforms;
  for (const auto& m : index["manifests"])
    platforms.insert(m["platform"]["os"].get<std::string>() + "/" + m["platform"]["architecture"].get<std::string>());
  EXPECT_EQ(platforms, (std::set<std::string>{"linux/amd64", "linux/arm64"})) << index.dump();
  std::printf("kernodeck image index %s:\n", indexDigest.c_str());
  for (const auto& m : index["manifests"])
    std::printf("  %s/%s %s\n", m["platform"]["os"].get<std::string>().c_str(),
                m["platform"]["architecture"].get<std::string>().c_str(), m["digest"].get<std::string>().c_str());
  // Each entry audited by this build, chosen by --platform: Debian 12, aarch64 binaries in the
  // arm64 one, and no error finding in either.
  for (const char* platform : {"linux/amd64", "linux/arm64"}) {
    RunResult a = run(K + " audit --no-cache --fail-on error --platform " + platform + " --format json oci:" + layout + ":1");
    EXPECT_EQ(a.code, 0) << platform << ": " << a.out << a.err;
    json report = json::parse(a.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << a.out;
    EXPECT_NE(report.dump().find(indexDigest), std::string::npos) << platform << ": the index's digest is not named";
    EXPECT_NE(report.dump().find(std::string("\"") + (std::string(platform) == "linux/arm64" ? "arm64" : "amd64") + "\""),
              std::string::npos)
        << platform << ": " << report.dump().substr(0, 2000);
  }
  run("podman manifest rm " + list + " >/dev/null 2>&1; podman rmi -f " + built["linux/amd64"] + " " + built["linux/arm64"] + " " +
      amd64Base + " " + arm64Base + " >/dev/null 2>&1");
}

}  // namespace

}  // namespace integration_ship_test
