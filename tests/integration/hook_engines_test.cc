// kernodeck-hook under each engine a GPU node runs today, over a fake host (h100-550-open:
// driver 550, CUDA 12.4 at most): podman through its hooks.d directory and through CDI (JSON and
// YAML specs) with crun and with runc, and crun and runc directly (containerd is in
// hook_containerd_test.cc). Each starts a real busybox container: allowed, refused under enforce
// (with the reason where the engine shows it) and started under warn with its host record.
//
// Set-up the tests make for themselves: podman reads a temporary containers.conf
// (CONTAINERS_CONF) with ulimits these VMs allow; the CDI specs go to /var/run/cdi (podman 4.3
// has no setting for the spec directories) under a kind unique to the test run and are removed
// after; crun needs the hugetlb controller out of the cgroup v2 hierarchy (a hybrid layout it
// refuses), so it is mounted as v1 when it is not already.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "hook_engines.h"

namespace integration_hook_engines_test {

using nlohmann::json;
using namespace kdktest;
using namespace kdktest::engines;

namespace {

void podmanCdi(const std::string& runtime, const std::string& reasonVisible, bool yaml = false) {
  if (::geteuid() != 0 || !haveTool("podman") || !haveTool(runtime) || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, podman, " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  CdiSpec spec = fakeNvidiaSpec(host, yaml);
  std::string log = tempDir("enginelog") + "/hook.log";
  for (const char* policy : {"warn", "enforce"}) {
    // The administrator's step: the hook into the NVIDIA spec's top-level edits (again with the
    // other policy: the entry is replaced, not added).
    RunResult inj = run(kHook + " cdi inject " + spec.file + " --binary " + kHook + " --policy " + policy +
                        " --host-root " + host + " --log " + log);
    ASSERT_EQ(inj.code, 0) << inj.err;
    json edited = readSpec(spec.file);
    ASSERT_EQ(edited["containerEdits"]["hooks"].size(), 1u) << readFile(spec.file);
    EXPECT_EQ(edited["devices"][0]["name"], "0") << readFile(spec.file);  // still a string, in YAML too
    for (const auto& c : kCases) {
      std::string where = runtime + " " + c.name + " [" + policy + "]";
      RunResult r = run("CONTAINERS_CONF=" + containersConf() + " timeout 120 podman --runtime " + runtime +
                        " run --rm --network none --device " + spec.kind +
                        "=0 -e NVIDIA_VISIBLE_DEVICES=0 -e 'NVIDIA_REQUIRE_CUDA=" + c.env + "' --rootfs " +
                        busyboxRootfs() + " /bin/sh -c 'cat /run/kernodeck/host.json'");
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      expectOutcome(r, log, starts, c.enforceStarts, where, reasonVisible);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

void direct(const std::string& runtime, const json& extra, const std::string& reasonVisible) {
  if (::geteuid() != 0 || !haveTool(runtime) || !haveTool("busybox")) GTEST_SKIP() << "needs root and " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  int n = 0;
  for (const char* policy : {"warn", "enforce"})
    for (const auto& c : kCases) {
      std::string where = runtime + " " + c.name + " [" + policy + "]";
      std::string log = tempDir("enginelog") + "/hook.log";
      std::string b = bundleWithHook(runtime, policy, host, log, c.env, extra);
      json hooks = json::parse(readFile(b + "/config.json"))["hooks"]["createRuntime"];
      ASSERT_EQ(hooks.size(), 2u) << where;  // the other hook kept
      EXPECT_EQ(hooks[0]["path"], "/bin/sh");
      std::string id = "kdk-engine-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
      // stderr through a pipe, as on a terminal: crun's hooks.stderr then reaches it.
      RunResult r = run("cd / && (timeout 60 " + runtime + " run --bundle " + b + " " + id +
                        " < /dev/null; echo $? > " + b + "/rc) 2>&1 | cat; exit $(cat " + b + "/rc)");
      run(runtime + " delete -f " + id + " >/dev/null 2>&1");
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      expectOutcome(r, log, starts, c.enforceStarts, where, reasonVisible);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

}  // namespace

TEST(HookEngines, PodmanCrunThroughCdi) {
  // crun under podman shows only "error executing hook"; the reason is in the node's log.
  podmanCdi("crun", "error executing hook");
}

TEST(HookEngines, PodmanRuncThroughCdi) { podmanCdi("runc", "kernodeck-hook: refused: hook.require.unsatisfied"); }

// NVIDIA's spec as nvidia-ctk writes it by default, YAML: the hook is added in YAML and podman
// reads the result.
TEST(HookEngines, PodmanRuncThroughYamlCdiSpec) {
  podmanCdi("runc", "kernodeck-hook: refused: hook.require.unsatisfied", true);
}

// podman's own hook directory: the hooks.d file `kernodeck-hook hooks-d` writes (what
// `hooks/install` puts in /usr/share/containers/oci/hooks.d), read through --hooks-dir, for a
// container given the fake GPU's device nodes with --device, as an administrator without CDI does.
void podmanHooksDir(const std::string& runtime, const std::string& reasonVisible) {
  if (::geteuid() != 0 || !haveTool("podman") || !haveTool(runtime) || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, podman, " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  for (const char* policy : {"warn", "enforce"}) {
    std::string dir = tempDir("hooksd"), log = tempDir("enginelog") + "/hook.log";
    RunResult w = run(kHook + " hooks-d --output " + dir + "/kernodeck-hook.json --binary " + kHook + " --policy " +
                      policy + " --host-root " + host + " --log " + log);
    ASSERT_EQ(w.code, 0) << w.err;
    std::string devices;
    for (const char* d : {"nvidia0", "nvidiactl", "nvidia-uvm"})
      devices += " --device " + host + "/dev/" + d + ":/dev/" + d;
    for (const auto& c : kCases) {
      std::string where = "podman hooks.d " + runtime + " " + c.name + " [" + policy + "]";
      RunResult r = run("CONTAINERS_CONF=" + containersConf() + " timeout 120 podman --hooks-dir " + dir +
                        " --runtime " + runtime + " run --rm --network none" + devices +
                        " -e NVIDIA_VISIBLE_DEVICES=0 -e 'NVIDIA_REQUIRE_CUDA=" + c.env + "' --rootfs " +
                        busyboxRootfs() + " /bin/sh -c 'cat /run/kernodeck/host.json'");
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      expectOutcome(r, log, starts, c.enforceStarts, where, reasonVisible);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(HookEngines, PodmanRuncThroughHooksDir) {
  podmanHooksDir("runc", "kernodeck-hook: refused: hook.require.unsatisfied");
}

TEST(HookEngines, PodmanCrunThroughHooksDir) { podmanHooksDir("crun", "error executing hook"); }

TEST(HookEngines, Runc) { direct("runc", json::object(), "kernodeck-hook: refused: hook.require.unsatisfied"); }

TEST(HookEngines, CrunShowsTheReasonThroughHooksStderr) {
  direct("crun", {{"annotations", {{"run.oci.hooks.stderr", "/dev/stderr"}}}},
         "kernodeck-hook: refused: hook.require.unsatisfied");
}

// crun passes "bundle": "/" for a container with a user namespace and devices
// (containers/crun#2261); the hook still finds the config through the container process.
TEST(HookEngines, CrunUserNamespaceBundleSlash) {
  json userns = {{"linux",
                  {{"uidMappings", {{{"containerID", 0}, {"hostID", 0}, {"size", 65536}}}},
                   {"gidMappings", {{{"containerID", 0}, {"hostID", 0}, {"size", 65536}}}}}}};
  if (::geteuid() != 0 || !haveTool("crun") || !haveTool("busybox") || !crunReady())
    GTEST_SKIP() << "needs root and crun";
  std::string host = hostTree("h100-550-open");
  for (const auto& c : kCases) {
    std::string log = tempDir("enginelog") + "/hook.log";
    std::string b = bundleWithHook("crun", "enforce", host, log, c.env, json::object());
    json cfg = json::parse(readFile(b + "/config.json"));
    cfg["linux"]["namespaces"].push_back({{"type", "user"}});
    cfg["linux"].update(userns["linux"], true);
    writeFile(b + "/config.json", cfg.dump(1));
    std::string id = "kdk-userns-" + std::to_string(::getpid()) + "-" + c.name.substr(0, 3);
    RunResult r = run("cd / && timeout 60 crun run --bundle " + b + " " + id + " < /dev/null");
    run("crun delete -f " + id + " >/dev/null 2>&1");
    json line = json::parse(lastLine(log), nullptr, false);
    ASSERT_TRUE(line.is_object()) << c.name;
    EXPECT_EQ(line["bundle"], "/") << c.name << ": not the crun#2261 case any more?";
    EXPECT_EQ(line["decision"], c.enforceStarts ? "allow" : "block") << c.name << " " << line.dump();
    EXPECT_EQ(r.code == 0, c.enforceStarts) << c.name << "\n" << r.err;
  }
}

// Kernodeck's own CDI spec: a container that asks for the device kernodeck.io/hook=check (here
// under a kind unique to the run) beside its GPU gets the check without any change to NVIDIA's spec.
TEST(HookEngines, OwnCdiSpecDeviceRunsTheCheck) {
  if (::geteuid() != 0 || !haveTool("podman") || !haveTool("runc") || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, podman, runc";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  CdiSpec gpu = fakeNvidiaSpec(host);  // no hook in it
  CdiSpec own = fakeNvidiaSpec(host);  // a file name and kind of our own, overwritten below
  std::string kind = "kdkown" + std::to_string(::getpid()) + ".test/hook";
  std::string log = tempDir("enginelog") + "/hook.log";
  RunResult w = run(kHook + " cdi spec --kind " + kind + " --output " + own.file + " --binary " + kHook +
                    " --policy enforce --host-root " + host + " --log " + log);
  ASSERT_EQ(w.code, 0) << w.err;
  for (const auto& c : kCases) {
    RunResult r = run(
        "CONTAINERS_CONF=" + containersConf() + " timeout 120 podman --runtime runc run --rm --network none --device " +
        kind + "=check --device " + gpu.kind + "=0 -e NVIDIA_VISIBLE_DEVICES=0 -e 'NVIDIA_REQUIRE_CUDA=" + c.env +
        "' --rootfs " + busyboxRootfs() + " /bin/sh -c 'cat /run/kernodeck/host.json'");
    expectOutcome(r, log, c.enforceStarts, c.enforceStarts, std::string("own spec ") + c.name,
                  "kernodeck-hook: refused: hook.require.unsatisfied");
  }
}

}  // namespace integration_hook_engines_test
