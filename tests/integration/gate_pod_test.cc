// The shipped container/k8s/init-container.yaml run for real with `podman kube play` against
// Debian's docker-registry (issue 25 section 1, issue 26 section 2). Every image is built here
// from host files (no Docker Hub): Kernodeck's image (kernodeck, the libraries ldd names and libcurl's, the
// static kernodeck-probe, busybox's cp) and workload images (busybox). Hostile workload images
// carry a library whose constructor exits 0 (exit_zero_library.cc), named by
// $KERNODECK_TORCH_PLUGIN or /etc/ld.so.preload: when the gate ran inside the judged image
// (`kernodeck probe --require-report`), either one turned "no passing report" into a start.
//
// The test changes only what a test host needs in the manifest: the two image references (to
// this registry, by digest), the pod's name, the workload's command (busybox instead of
// train.py), no --python (the images hold no Python), and --expect cpu where a start is expected
// (this host has no GPU). A hostPath /opt/kernodeck, which the manifest once had, is pointed at
// this build's kernodeck so that the old manifest can be run too.
#include <gtest/gtest.h>
#include <unistd.h>

#include "local_registry.h"
#include "no_host_hooks.h"
#include "support.h"

namespace integration_gate_pod_test {

using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kProbe = PROBE_BIN;
const std::string kExitZero = EXIT_ZERO_LIB;

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

class GatePod : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (kProbe.empty() || ::geteuid() != 0 || !haveTool("podman") || !haveTool("runc") || !haveTool("busybox") ||
        !haveTool("openssl"))
      return;
    reg_ = new LocalRegistry;
    if (!reg_->start()) return;
    dir_ = new std::string(tempDir("gatepod"));
    tag_ = new std::string("kdkgate" + std::to_string(::getpid()));
    const std::string& d = *dir_;
    // podman here: the ulimits these VMs allow, runc, and a pause image built from busybox
    // (podman's default infra image comes from a registry this host cannot reach).
    writeFile(d + "/containers.conf",
              "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n"
              "[engine]\nruntime = \"runc\"\ninfra_image = \"localhost/" +
                  *tag_ + "-pause:1\"\ninfra_command = \"/pause\"\n" + noHostHooks());
    bool ok = run("openssl genpkey -algorithm ed25519 -out " + d + "/key.pem && openssl pkey -in " + d +
                  "/key.pem -pubout -out " + d + "/key.pub")
                  .code == 0;
    ok = ok && image("pause", "", "", false);
    // Kernodeck's image: the gate's binary with its libraries, the static probe, cp.
    ok = ok && image("kernodeck", libsOf(K) + " && cp " + K + " " + kProbe + " ROOT/usr/local/bin/", "", true);
    // Workload images. bare: no report; good: a signed pass; failing: a signed fail (a
    // credential in its environment); evil-env, evil-preload: the hostile library.
    std::string hostile = libsOf(K) + " && cp " + kExitZero + " ROOT/lib/kdk-exit-zero.so";
    ok = ok && image("bare", "", "", true) && image("good", "", "", true) &&
         image("failing", "", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", true) &&
         image("evil-env", hostile, "KERNODECK_TORCH_PLUGIN=/lib/kdk-exit-zero.so", true) &&
         image("evil-preload", hostile + " && echo /lib/kdk-exit-zero.so > ROOT/etc/ld.so.preload", "", true);
    ok = ok && attach("good") == 0 && attach("failing") == 1 && attach("evil-preload") == 0;
    // The ConfigMap under a name of this process's: podman keeps a ConfigMap's volume under the
    // ConfigMap's name, one for the whole host, and rewrites its files at each kube play, so two
    // test processes at once each read the other's key (ctest -j4: a pass turned into
    // report.signature.invalid).
    writeFile(d + "/key-configmap.yaml",
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + keyMap() + "\ndata:\n  audit.pub: |\n" +
                  replaceAll("    " + readFile(d + "/key.pub"), "\n", "\n    ") + "\n");
    ready_ = ok;
  }

  static void TearDownTestSuite() {
    if (tag_) {
      run("podman volume rm -f " + keyMap() + " >/dev/null 2>&1");
      run("podman images --format '{{.ID}} {{.Repository}}' | grep -e '" + *tag_ + "' -e '" +
          (reg_ ? reg_->host() : std::string("none")) +
          "' | cut -d' ' -f1 | sort -u | xargs -r podman rmi -f >/dev/null 2>&1");
    }
    delete reg_;
  }

  void SetUp() override {
    if (!ready_)
      GTEST_SKIP() << "needs the static kernodeck-probe, root, podman, runc, busybox, openssl and docker-registry";
  }

  // The shell commands that copy BINARY's libraries (ldd) under ROOT, and libcurl with its own:
  // kernodeck opens it at its first HTTP exchange (registry/curl_lib.h), as Debian's libcurl4 in
  // container/Dockerfile provides it.
  static std::string libsOf(const std::string& binary) {
    return "curl=$(ldconfig -p | awk '/libcurl.so.4 / {print $NF; exit}') && for l in $(ldd " + binary +
           " | grep -o '/[^ ]*') $curl $(ldd $curl | grep -o '/[^ ]*'); do cp -L --parents \"$l\" ROOT/; done";
  }

  // Builds image NAME: busybox (sh, cp, echo, sleep), /pause, an os-release and a file naming
  // it, then `extra` (ROOT is its root) and `env` (VAR=VALUE); imports it with podman and, if
  // `push`, pushes it to team/NAME:1 (platform/kernodeck:1 for Kernodeck's image).
  static bool image(const std::string& name, const std::string& extra, const std::string& env, bool push) {
    std::string root = *dir_ + "/rootfs-" + name;
    std::string cmd =
        "mkdir -p ROOT/bin ROOT/etc ROOT/app ROOT/usr/local/bin ROOT/lib ROOT/tmp && cp \"$(command -v "
        "busybox)\" ROOT/bin/busybox && for a in sh cp echo sleep cat; do ln -s busybox ROOT/bin/$a; "
        "done && printf '#!/bin/sh\\nexec /bin/busybox sleep 100000\\n' > ROOT/pause && chmod 755 "
        "ROOT/pause && echo ID=kdkgate > ROOT/etc/os-release && echo " +
        name + " > ROOT/app/name";
    if (!extra.empty()) cmd += " && " + extra;
    cmd = replaceAll(cmd, "ROOT", root);
    std::string local = "localhost/" + *tag_ + "-" + name + ":1";
    cmd += " && tar -C " + root + " -cf " + root + ".tar . && podman import -q --change 'ENTRYPOINT [\"/pause\"]' " +
           (env.empty() ? "" : "--change 'ENV " + env + "' ") + root + ".tar " + local;
    if (push) cmd += " && podman push -q --tls-verify=false " + local + " docker://" + reg_->host() + "/" + repo(name);
    RunResult r = run(cmd);
    if (r.code != 0) ADD_FAILURE() << name << ": " << r.err;
    return r.code == 0;
  }
  static std::string keyMap() { return "kernodeck-audit-key-" + *tag_; }
  static std::string repo(const std::string& name) {
    return (name == "kernodeck" ? "platform/" : "team/") + name + ":1";
  }
  static std::string byDigest(const std::string& name) {
    std::string r = repo(name);
    return reg_->host() + "/" + r.substr(0, r.find(':')) + "@" + reg_->digestOf(r);
  }
  static int attach(const std::string& name) {
    return run(K + " audit --no-cache --attach --sign-key " + *dir_ + "/key.pem " + reg_->host() + "/" + repo(name))
        .code;
  }

  struct Outcome {
    int playCode = -1;
    std::string out, err;
    std::map<std::string, std::string> status;  // container (without the pod's prefix) -> podman's status
    std::string workloadLog;
    std::string initLogs;  // what the init containers printed (the gate's verdict line among it)
  };

  // `podman kube play` of MANIFEST (default: the shipped init-container.yaml) with the workload
  // image NAME; `cpu`: --expect cpu for the probe (this host has no GPU).
  static Outcome play(const std::string& name, bool cpu, const std::string& manifest = "") {
    static int n = 0;
    std::string pod = *tag_ + "-" + std::to_string(n++);
    std::string yaml =
        readFile(manifest.empty() ? std::string(SOURCE_DIR) + "/container/k8s/init-container.yaml" : manifest);
    std::string bin = *dir_ + "/hostpath-bin";
    run("mkdir -p " + bin + " && cp " + K + " " + kProbe + " " + bin + "/");
    yaml = replaceAll(yaml, "registry.example.com/platform/kernodeck-gate@sha256:" + std::string(64, '1'),
                      byDigest("kernodeck"));
    yaml = replaceAll(yaml, "registry.example.com/team/trainer@sha256:" + std::string(64, '0'), byDigest(name));
    yaml = replaceAll(yaml, "name: trainer\n  labels", "name: " + pod + "\n  labels");
    yaml = replaceAll(yaml, ", \"--python\", \"/opt/venv/bin/python\"", "");
    yaml = replaceAll(yaml, "[\"/opt/venv/bin/python\", \"train.py\"]",
                      "[\"/bin/busybox\", \"echo\", \"workload-started\"]");
    yaml = replaceAll(yaml, "path: /opt/kernodeck\n", "path: " + bin + "\n");
    yaml = replaceAll(yaml, "name: kernodeck-audit-key\n", "name: " + keyMap() + "\n");
    if (cpu) yaml = replaceAll(yaml, "\"--expect\", \"cuda\"", "\"--expect\", \"cpu\"");
    std::string file = *dir_ + "/" + pod + ".yaml";
    writeFile(file, yaml);
    Outcome o;
    RunResult r = run("CONTAINERS_CONF=" + *dir_ + "/containers.conf timeout 180 podman kube play --network host " +
                      "--tls-verify=false --configmap " + *dir_ + "/key-configmap.yaml " + file);
    o.playCode = r.code;
    o.out = r.out;
    o.err = r.err;
    RunResult ps = run("podman ps -a --filter pod=" + pod + " --format '{{.Names}} {{.Status}}'");
    std::istringstream lines(ps.out);
    for (std::string line; std::getline(lines, line);) {
      size_t sp = line.find(' ');
      std::string cname = line.substr(0, sp);
      if (cname.rfind(pod + "-", 0) == 0) o.status[cname.substr(pod.size() + 1)] = line.substr(sp + 1);
    }
    o.workloadLog = run("podman logs " + pod + "-trainer 2>&1").out;
    for (const char* c : {"kernodeck-gate", "kernodeck-probe"})
      if (o.status.count(c)) o.initLogs += std::string(c) + ": " + run("podman logs " + pod + "-" + c + " 2>&1").out;
    run("podman pod rm -f -t 0 " + pod + " >/dev/null 2>&1");
    return o;
  }

  static std::string describe(const Outcome& o) {
    std::string s = "kube play exit " + std::to_string(o.playCode) + "\n" + o.out + o.err + "\ncontainers:\n";
    for (const auto& [k, v] : o.status) s += "  " + k + ": " + v + "\n";
    return s + o.initLogs + "workload log: " + o.workloadLog;
  }
  static bool started(const Outcome& o) {
    return o.status.count("trainer") && o.status.at("trainer").rfind("Exited (0)", 0) == 0 &&
           o.workloadLog.find("workload-started") != std::string::npos;
  }
  // The init container that stopped the pod: the one left exited with a non-zero status.
  static std::string stoppedBy(const Outcome& o) {
    for (const auto& [k, v] : o.status)
      if (k != "trainer" && k.find("infra") == std::string::npos && v.rfind("Exited (", 0) == 0 &&
          v.rfind("Exited (0)", 0) != 0)
        return k;
    return "";
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static std::string* tag_;
  static bool ready_;
};

LocalRegistry* GatePod::reg_ = nullptr;
std::string* GatePod::dir_ = nullptr;
std::string* GatePod::tag_ = nullptr;
bool GatePod::ready_ = false;

TEST_F(GatePod, AnImageWithAPassingSignedReportStartsItsWorkload) {
  Outcome o = play("good", true);
  EXPECT_EQ(o.playCode, 0) << describe(o);
  EXPECT_TRUE(started(o)) << describe(o);
}

TEST_F(GatePod, AnUnattestedOrFailingImageDoesNotStart) {
  for (const char* name : {"bare", "failing"}) {
    Outcome o = play(name, true);
    EXPECT_NE(o.playCode, 0) << name << "\n" << describe(o);
    EXPECT_FALSE(started(o)) << name << "\n" << describe(o);
    EXPECT_EQ(stoppedBy(o), "kernodeck-gate") << name << "\n" << describe(o);
  }
}

// The attack of issue 25 section 1: the judged image names a library that exits 0 in
// $KERNODECK_TORCH_PLUGIN and has no report. The gate runs in Kernodeck's image, where neither
// the variable nor the library exists.
TEST_F(GatePod, AHostileUnattestedImageCannotTurnTheGatesRefusalIntoAStart) {
  Outcome o = play("evil-env", true);
  EXPECT_NE(o.playCode, 0) << describe(o);
  EXPECT_FALSE(started(o)) << describe(o);
  EXPECT_EQ(stoppedBy(o), "kernodeck-gate") << describe(o);
}

// The static probe runs inside the judged image, which here preloads that library through
// /etc/ld.so.preload and carries a valid passing report: the gate passes, and the probe's own
// failure (--expect cuda on a host without a GPU) still stops the pod, as it does for the clean
// image.
TEST_F(GatePod, TheStaticProbeInsideAHostileImageStillFailsWithoutAGpu) {
  for (const char* name : {"good", "evil-preload"}) {
    Outcome o = play(name, false);
    EXPECT_NE(o.playCode, 0) << name << "\n" << describe(o);
    EXPECT_FALSE(started(o)) << name << "\n" << describe(o);
    EXPECT_EQ(stoppedBy(o), "kernodeck-probe") << name << "\n" << describe(o);
  }
}

}  // namespace

}  // namespace integration_gate_pod_test
