// kernodeck-hook under containerd, over the fake host of hook_engines.h: containerd 1.6
// (Debian 12's) through its runc shim with `ctr run --config` and through CRI as kubelet drives it
// with a base_runtime_spec, and containerd 1.7 (Debian 13's, unpacked by `scripts/deps --test`)
// through CRI with CDI. Each runs a private containerd (root, state, socket and CDI spec folder in
// temporary folders), stopped at the end, and starts real busybox containers: allowed, refused
// under enforce with the reason in the error the user sees, started under warn with the record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "hook_engines.h"

namespace integration_hook_containerd_test {

using nlohmann::json;
using namespace kdktest;
using namespace kdktest::engines;

// containerd 1.6 (Debian 12's): a private containerd (CRI off, its own root, state and socket)
// runs through its runc shim a spec that `kernodeck-hook runc-config` gave the hook (`ctr run
// --config`): allowed, refused under enforce with the reason in ctr's error, started under warn.
// The same spec file is what CRI's `base_runtime_spec` takes: ContainerdCriBaseRuntimeSpec below.
TEST(HookEngines, ContainerdRunsTheHookFromTheSpec) {
  if (::geteuid() != 0 || !haveTool("containerd") || !haveTool("ctr") || !haveTool("runc") || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, containerd, ctr, runc";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  std::string d = tempDir("containerd");
  writeFile(d + "/config.toml", "version = 2\nroot = \"" + d + "/root\"\nstate = \"" + d + "/state\"\n" +
                                    "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = \"" + d +
                                    "/containerd.sock\"\n");
  run("cd " + d + " && (containerd --config config.toml > containerd.log 2>&1 < /dev/null & echo $! > containerd.pid)");
  std::string ctr = "ctr --address " + d + "/containerd.sock";
  struct Stop {
    std::string d;
    ~Stop() { run("kill $(cat " + d + "/containerd.pid) 2>/dev/null; sleep 0.2"); }
  } stop{d};
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = run(ctr + " version >/dev/null 2>&1").code == 0;
    if (!up) ::usleep(100000);
  }
  ASSERT_TRUE(up) << readFile(d + "/containerd.log");
  int n = 0;
  for (const char* policy : {"warn", "enforce"})
    for (const auto& c : kCases) {
      std::string where = std::string("containerd ") + c.name + " [" + policy + "]";
      std::string log = tempDir("enginelog") + "/hook.log";
      std::string b = bundleWithHook("runc", policy, host, log, c.env, json::object());
      json cfg = json::parse(readFile(b + "/config.json"));
      cfg["root"]["path"] = b + "/rootfs";  // the shim's bundle is its own directory
      writeFile(b + "/config.json", cfg.dump(1));
      std::string id = "kdk-ctd-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
      RunResult r = run("timeout 60 " + ctr + " run --rm --config " + b + "/config.json " + id + " < /dev/null");
      run(ctr + " task rm -f " + id + " >/dev/null 2>&1; " + ctr + " container rm " + id + " >/dev/null 2>&1");
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      expectOutcome(r, log, starts, c.enforceStarts, where, "kernodeck-hook: refused: hook.require.unsatisfied");
      if (::testing::Test::HasFatalFailure()) return;
    }
}

namespace {

// Debian's python, which has python3-grpcio and python3-grpc-tools (a python3 earlier in PATH may not).
const std::string kSystemPython = "/usr/bin/python3";

// Where `scripts/deps --test` unpacks Debian 13's containerd 1.7 (containerd, its runc shim and
// ctr; never installed): Debian 12 has containerd 1.6, whose CRI plugin has no CDI.
const std::string kContainerd17 = "/var/cache/kernodeck-test/containerd-1.7/usr/bin";

// What a CRI test lacks (root, `tools`, Debian's grpc for python), "" when nothing.
std::string criMissing(const std::vector<std::string>& tools) {
  std::string missing = ::geteuid() != 0 ? " root" : "";
  for (const auto& tool : tools)
    if (!haveTool(tool)) missing += " " + tool;
  if (run(kSystemPython + " -c 'import grpc, grpc_tools'").code != 0)
    missing += " python3-grpcio and python3-grpc-tools (for " + kSystemPython + ")";
  return missing;
}

// One runtime handler of a CRI containerd: its name and the base_runtime_spec it starts every
// container from ("" for none: containerd's default spec).
struct CriRuntime {
  std::string name, baseSpec;
};

// A private containerd with its CRI plugin on, as a Kubernetes node runs it: its own root, state,
// socket, runc root and (empty) CNI folders under `dir`; `runtimes` through the runc shim, the
// first the default; `criExtra` more keys of the CRI plugin's table (CDI's). `binDir`: containerd,
// its shim and ctr taken from there ("" for the system's). The sandbox image is a local busybox
// image (pods run on the node network, so no CNI and no pull). This VM cannot lower
// oom_score_adj (CRI gives a pod's sandbox -998), hence restrict_oom_score_adj. Stopped on
// destruction, even when the test failed: its tasks killed and removed (their shims outlive
// containerd), containerd ended, what they mounted unmounted.
struct CriContainerd {
  std::string dir, ctr;
  bool up = false;

  CriContainerd(const std::string& d, const std::vector<CriRuntime>& runtimes, const std::string& criExtra = "",
                const std::string& binDir = "")
      : dir(d), ctr((binDir.empty() ? "" : binDir + "/") + "ctr --address " + d + "/containerd.sock -n k8s.io") {
    std::string config = "version = 2\nroot = \"" + d + "/root\"\nstate = \"" + d + "/state\"\n[grpc]\n  address = \"" +
                         d + "/containerd.sock\"\n" + "[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"" +
                         kImage + "\"\n  stream_server_port = \"0\"\n  restrict_oom_score_adj = true\n" + criExtra +
                         "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n    bin_dir = \"" + d +
                         "/cni/bin\"\n    conf_dir = \"" + d + "/cni/conf\"\n" +
                         "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n    default_runtime_name = \"" +
                         runtimes.at(0).name + "\"\n";
    for (const auto& rt : runtimes) {
      std::string table = "    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes." + rt.name + "]\n";
      config += table + "      runtime_type = \"io.containerd.runc.v2\"\n";
      if (!rt.baseSpec.empty()) config += "      base_runtime_spec = \"" + rt.baseSpec + "\"\n";
      config += "      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes." + rt.name + ".options]\n" +
                "        Root = \"" + d + "/runc\"\n";
    }
    writeFile(d + "/config.toml", config);
    // The shim is found through PATH: binDir's first.
    std::string path = binDir.empty() ? "" : "PATH=" + binDir + ":$PATH ";
    run("cd " + d + " && (" + path + (binDir.empty() ? "" : binDir + "/") + "containerd --config " + d +
        "/config.toml > containerd.log 2>&1 < /dev/null & echo $! > containerd.pid)");
    for (int i = 0; i < 100 && !up; ++i) {
      up = run(ctr + " version >/dev/null 2>&1").code == 0;
      if (!up) ::usleep(100000);
    }
  }
  ~CriContainerd() {
    run("for t in $(" + ctr + " tasks ls -q 2>/dev/null); do " + ctr + " tasks rm -f $t >/dev/null 2>&1; done");
    run("p=$(cat " + dir + "/containerd.pid); kill $p; for i in $(seq 50); do kill -0 $p 2>/dev/null || break; " +
        "sleep 0.1; done; kill -9 $p 2>/dev/null; true");
    // Deepest first; -l for one still busy.
    run("grep -o ' " + dir + "/[^ ]*' /proc/self/mounts | sort -r | while read m; do umount -l $m; done");
  }

  // Builds (umoci) and imports the one image, sandbox and container: busybox, sleeping when run
  // as the pod's sandbox. "" or what failed.
  std::string importImage() const {
    RunResult img = run(umociBusyboxCommands(dir + "/layout", dir + "/unpacked") + " && umoci config --image " + dir +
                        "/layout:base --config.entrypoint /bin/busybox --config.entrypoint sleep --config.cmd 3600" +
                        " && tar -C " + dir + "/layout -cf " + dir + "/image.tar .");
    if (img.code != 0) return "umoci: " + img.err;
    RunResult imp = run(ctr + " images import --base-name kernodeck.test/busybox " + dir + "/image.tar");
    return imp.code == 0 ? "" : "ctr images import: " + imp.err + readFile(dir + "/containerd.log");
  }

  static constexpr const char* kImage = "kernodeck.test/busybox:base";
};

// Runs tests/tools/cri_client.py on the containerd's socket with `plan`; its JSON answer (null
// when it printed none; `err` then says why).
json criClient(const std::string& socket, const json& plan, std::string* err) {
  std::string file = tempDir("criplan") + "/plan.json";
  writeFile(file, plan.dump(1));
  RunResult r =
      run("timeout 120 " + kSystemPython + " " + SOURCE_DIR + "/tests/tools/cri_client.py " + socket + " " + file);
  *err = "cri_client exit " + std::to_string(r.code) + "\n" + r.err + r.out;
  return r.code == 0 ? json::parse(r.out, nullptr, false) : json();
}

// One pod on the node network (`handler`: its runtime class, "" the default) with one container
// of the busybox image, as kubelet runs it; `container` adds to the container's config (command,
// env, devices, annotations, cdi_devices). `seen`: the outcome as the other engines' checks read
// it: started (exit 0, its stdout) or refused (the StartContainer error, what kubelet shows in
// the pod's events). `id`: the container's; `version` (when given): containerd's, as CRI says it.
void criPod(const CriContainerd& c, const std::string& pod, const std::string& handler, const json& container,
            RunResult* seen, std::string* id, std::string* version = nullptr) {
  json cfg = {{"name", "gpu"}, {"image", CriContainerd::kImage}, {"log_path", "gpu/0.log"}};
  cfg.update(container);
  json plan = {{"images", {CriContainerd::kImage}},
               {"pod",
                {{"name", pod},
                 {"uid", pod + "-" + std::to_string(::getpid())},
                 {"namespace", "kernodeck-test"},
                 {"log_directory", c.dir + "/pods/" + pod},
                 {"host_network", true},
                 {"runtime_handler", handler}}},
               {"container", cfg},
               {"wait_s", 20}};
  std::string err;
  json res = criClient(c.dir + "/containerd.sock", plan, &err);
  ASSERT_TRUE(res.is_object()) << pod << ": " << err;
  ASSERT_EQ(res["version"]["runtime_api_version"], "v1") << pod << "\n" << res.dump(1);
  if (version) *version = res["version"].value("runtime_version", "");
  ASSERT_EQ(res["create_container"]["ok"], true) << pod << "\n" << res.dump(1) << readFile(c.dir + "/containerd.log");
  EXPECT_EQ(res["cleanup_errors"], json::array()) << pod;
  *id = res["create_container"]["id"];
  const json& start = res["start_container"];
  bool started = start.is_object() && start.value("ok", false) && res["status"].is_object() &&
                 res["status"].value("state", "") == "CONTAINER_EXITED" && res["status"].value("exit_code", -1) == 0;
  *seen = {started ? 0 : 1, res["stdout"].is_string() ? res["stdout"].get<std::string>() : "",
           start.is_object() && start.contains("error") ? start["error"].get<std::string>() : res.dump(1)};
}

size_t lineCount(const std::string& file) {
  std::string text = readFile(file);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

// Kubernetes' path: kubelet drives containerd's CRI plugin (here a small CRI v1 client,
// tests/tools/cri_client.py, over a private containerd 1.6 with CRI on), whose runtime takes a
// base_runtime_spec that `kernodeck-hook runc-config` gave the hook (`ctr oci spec` first). A pod
// on the node network gets one container with the fake host's GPU 0 passed as a device plugin
// passes it (CRI devices). Under enforce (the default runtime) StartContainer fails with the
// hook's reason in the gRPC error, which is what kubelet shows in the pod's events; under warn
// (runtime class kernodeck-warn) the container starts and prints its host record.
TEST(HookEngines, ContainerdCriBaseRuntimeSpec) {
  std::string missing = criMissing({"containerd", "ctr", "runc", "busybox", "umoci"});
  if (!missing.empty()) GTEST_SKIP() << "missing:" << missing;
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  std::string d = tempDir("cricontainerd");

  // The base specs an administrator writes, one per policy.
  std::map<std::string, std::string> logs;
  for (const char* policy : {"enforce", "warn"}) {
    std::string spec = d + "/" + policy + "-spec.json";
    logs[policy] = d + "/" + policy + "-hook.log";
    RunResult r = run("ctr oci spec > " + spec + " && " + kHook + " runc-config " + spec + " --binary " + kHook +
                      " --policy " + policy + " --host-root " + host + " --log " + logs[policy]);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  CriContainerd containerd(d, {{"runc", d + "/enforce-spec.json"}, {"kernodeck-warn", d + "/warn-spec.json"}});
  ASSERT_TRUE(containerd.up) << readFile(d + "/containerd.log");
  std::string imported = containerd.importImage();
  ASSERT_EQ(imported, "");

  json devices = json::array();
  for (const char* node : {"nvidiactl", "nvidia-uvm", "nvidia0"})
    devices.push_back({{"container_path", std::string("/dev/") + node}, {"host_path", host + "/dev/" + node}});
  int n = 0;
  for (const char* policy : {"warn", "enforce"})
    for (const auto& c : kCases) {
      std::string where = std::string("containerd CRI ") + c.name + " [" + policy + "]";
      RunResult seen;
      std::string id;
      criPod(containerd, "kdk-cri-" + std::to_string(n++), std::string(policy) == "warn" ? "kernodeck-warn" : "",
             {{"command", {"/bin/busybox", "cat", "/run/kernodeck/host.json"}},
              {"env", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", c.env}}},
              {"devices", devices}},
             &seen, &id);
      if (::testing::Test::HasFatalFailure()) return;
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      expectOutcome(seen, logs[policy], starts, c.enforceStarts, where,
                    "kernodeck-hook: refused: hook.require.unsatisfied");
      if (::testing::Test::HasFatalFailure()) return;
      // The hook ran for this very container, from the base spec of the pod's runtime.
      EXPECT_EQ(json::parse(lastLine(logs[policy]))["container"], id) << where;
    }
  // One hook run per pod container, none for the pods' sandboxes: containerd 1.6 makes the
  // sandbox (pause) container from its default spec, not the base spec (hooks/README says so).
  for (const auto& [policy, log] : logs) EXPECT_EQ(lineCount(log), 2u) << policy << ":\n" << readFile(log);
}

// Kubernetes with containerd 1.7's CDI (Debian 13's containerd, unpacked by scripts/deps, over
// Debian 12's runc): CRI's `enable_cdi` on, `cdi_spec_dirs` a folder holding the fake host's
// NVIDIA spec with the hook added by `kernodeck-hook cdi inject`, no base_runtime_spec. A pod's
// container asks for the GPU as kubelet passes a device plugin's CDI device, by the CRI field
// CDIDevices (`nvidia.com/gpu=0` there, a kind unique to the run here) or by an annotation
// `cdi.k8s.io/<key>` (a device plugin's "annotations"), both of which containerd 1.7.24 applies:
// each verdict is checked both ways. Under enforce StartContainer fails with the hook's reason;
// under warn (the same spec injected again: containerd's CDI registry reads the changed file at
// the next container) the container starts with its host record. A container that asks for no
// CDI device gets no hook: the check is per GPU container, and never in the pod's sandbox.
TEST(HookEngines, ContainerdCdi) {
  std::string missing = criMissing({"runc", "busybox", "umoci"});
  if (::access((kContainerd17 + "/containerd").c_str(), X_OK) != 0 ||
      ::access((kContainerd17 + "/containerd-shim-runc-v2").c_str(), X_OK) != 0)
    missing += " containerd 1.7 in " + kContainerd17 + " (scripts/deps --test unpacks Debian 13's there)";
  if (!missing.empty()) GTEST_SKIP() << "missing:" << missing;
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  std::string d = tempDir("cdicontainerd");
  CdiSpec spec = fakeNvidiaSpec(host, false, d + "/cdi");
  CriContainerd containerd(d, {{"runc", ""}}, "  enable_cdi = true\n  cdi_spec_dirs = [\"" + d + "/cdi\"]\n",
                           kContainerd17);
  ASSERT_TRUE(containerd.up) << readFile(d + "/containerd.log");
  std::string imported = containerd.importImage();
  ASSERT_EQ(imported, "");

  int n = 0;
  for (const char* policy : {"enforce", "warn"}) {
    std::string log = d + "/" + policy + "-hook.log";
    RunResult inj = run(kHook + " cdi inject " + spec.file + " --binary " + kHook + " --policy " + policy +
                        " --host-root " + host + " --log " + log);
    ASSERT_EQ(inj.code, 0) << inj.err;
    for (const char* how : {"CDIDevices", "annotation"})
      for (const auto& c : kCases) {
        std::string where = std::string("containerd 1.7 CDI (") + how + ") " + c.name + " [" + policy + "]";
        json asks = std::string(how) == "CDIDevices"
                        ? json{{"cdi_devices", {spec.kind + "=0"}}}
                        : json{{"annotations", {{"cdi.k8s.io/kernodeck-test_gpu0", spec.kind + "=0"}}}};
        asks["command"] = {"/bin/busybox", "cat", "/run/kernodeck/host.json"};
        asks["env"] = {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", c.env}};
        RunResult seen;
        std::string id, version;
        criPod(containerd, "kdk-cdi-" + std::to_string(n++), "", asks, &seen, &id, &version);
        if (::testing::Test::HasFatalFailure()) return;
        ASSERT_TRUE(version.starts_with("1.7.")) << version;
        bool starts = std::string(policy) == "warn" || c.enforceStarts;
        expectOutcome(seen, log, starts, c.enforceStarts, where, "kernodeck-hook: refused: hook.require.unsatisfied");
        if (::testing::Test::HasFatalFailure()) return;
        EXPECT_EQ(json::parse(lastLine(log))["container"], id) << where;
      }
    // The same env with no CDI device: no hook, so it starts even under enforce.
    RunResult seen;
    std::string id;
    criPod(containerd, "kdk-cdi-" + std::to_string(n++), "",
           {{"command", {"/bin/busybox", "echo", "no GPU asked for"}},
            {"env", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", kCases.back().env}}}},
           &seen, &id);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_EQ(seen.code, 0) << policy << "\n" << seen.err;
    EXPECT_EQ(seen.out, "no GPU asked for\n") << policy;
    // One hook run per GPU container: none for the sandboxes, none for the container without.
    EXPECT_EQ(lineCount(log), 4u) << policy << ":\n" << readFile(log);
  }
}

}  // namespace integration_hook_containerd_test
