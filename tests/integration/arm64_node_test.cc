// The node pieces cross-built for arm64 (GH200/GB200 Grace nodes; `scripts/build --arch arm64`
// into build-arm64/, or $KERNODECK_ARM64_BUILD), run here through qemu-aarch64-static: the
// static kernodeck-hook judges the same fixture hosts as the amd64 build, with the same outcome,
// and the aarch64 ones (GH200 on 550 and 570, GB200, a Jetson); real runc starts a container
// whose createRuntime hook is the arm64 binary; the static kernodeck-probe reads devices and the
// hook's record on a GH200 host. Every test skips, naming why, without the cross build or qemu.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "support.h"

namespace integration_arm64_node_test {

using nlohmann::json;
using namespace kdktest;

namespace {

struct Arm64 {
  std::string hook, probe;  // the aarch64 binaries
  std::string skip;         // why the tests cannot run, empty when they can
};

// The cross-built binaries and qemu, or why not.
Arm64 arm64Node() {
  Arm64 a;
  const char* env = std::getenv("KERNODECK_ARM64_BUILD");
  std::string dir = env && *env ? env : std::string(SOURCE_DIR) + "/build-arm64";
  a.hook = dir + "/kernodeck-hook";
  a.probe = dir + "/kernodeck-probe";
  if (!haveTool("qemu-aarch64-static"))
    a.skip = "no qemu-aarch64-static (scripts/deps --arm64 installs qemu-user-static)";
  else if (::access(a.hook.c_str(), X_OK) != 0 || ::access(a.probe.c_str(), X_OK) != 0)
    a.skip = "no arm64 cross build in " + dir + " (scripts/build --arch arm64)";
  return a;
}

// The command that runs an aarch64 binary here: qemu named explicitly, so nothing depends on a
// binfmt_misc registration (containers rarely have one).
std::string underQemu(const std::string& bin) { return "qemu-aarch64-static " + bin; }

std::string hostTree(const std::string& name) {
  static std::map<std::string, std::string> made;
  if (auto it = made.find(name); it != made.end()) return it->second;
  std::string d = tempDir("arm64host") + "/" + name;
  RunResult r = run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + name + " " + d);
  return made[name] = r.code == 0 ? d : std::string();
}

json nvDevices(int gpus, int uvmMajor) {
  json d = json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                        {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", uvmMajor}, {"minor", 0}}});
  for (int i = 0; i < gpus; ++i)
    d.push_back({{"path", "/dev/nvidia" + std::to_string(i)}, {"type", "c"}, {"major", 195}, {"minor", i}});
  return d;
}

struct HookRun {
  int code = -1;
  std::string err;
  json log, record;  // the last line of --log; the host record written into the container (or null)
};

// Runs HOOK (a command) as a runtime runs a createRuntime hook: a bundle whose config asks for
// ENV and DEVICES, and the runtime state on stdin, against the host tree HOST.
HookRun runHook(const std::string& hook, const std::string& host, const std::vector<std::string>& env,
                const json& devices, const std::string& policy = "enforce") {
  std::string b = tempDir("arm64bundle");
  run("mkdir -p " + b + "/rootfs");
  json e = json::array({"PATH=/usr/bin:/bin"});
  for (const auto& v : env) e.push_back(v);
  json cfg = {{"ociVersion", "1.0.2"},
              {"root", {{"path", "rootfs"}}},
              {"process", {{"args", {"/bin/true"}}, {"env", e}, {"cwd", "/"}}},
              {"linux", {{"devices", devices}}}};
  writeFile(b + "/config.json", cfg.dump());
  writeFile(b + "/state.json",
            json({{"ociVersion", "1.0.2"}, {"id", "arm64"}, {"status", "creating"}, {"pid", 0}, {"bundle", b}}).dump());
  RunResult r = run("timeout 60 " + hook + " --policy " + policy + " --host-root " + host + " --log " + b +
                    "/hook.log createRuntime < " + b + "/state.json");
  HookRun out;
  out.code = r.code;
  out.err = r.err;
  std::string log = readFile(b + "/hook.log");
  if (size_t end = log.find_last_not_of('\n'); end != std::string::npos) {
    size_t start = log.rfind('\n', end);
    out.log = json::parse(log.substr(start == std::string::npos ? 0 : start + 1, end + 1), nullptr, false);
  }
  std::string rec = readFile(b + "/rootfs/run/kernodeck/host.json");
  out.record = rec.empty() ? json(nullptr) : json::parse(rec, nullptr, false);
  return out;
}

std::set<std::string> verdictCodes(const json& record) {
  std::set<std::string> codes;
  if (record.is_object() && record.contains("verdicts"))
    for (const auto& v : record["verdicts"]) codes.insert(v.value("code", ""));
  return codes;
}

struct Case {
  const char* name;
  const char* host;
  std::vector<std::string> env;
  json devices;
  bool starts;       // under enforce
  const char* code;  // a verdict code in the refusal's reason, or in the record when it starts ("" none)
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      // The amd64 build's table (hook_runc_test.cc).
      {"h100 good",
       "h100-550-open",
       {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.1"},
       nvDevices(2, 508),
       true,
       ""},
      {"470 vs cuda>=12.4",
       "driver-470",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"},
       nvDevices(1, 509),
       false,
       "hook.require.unsatisfied"},
      {"missing nvidia-uvm",
       "no-uvm",
       {"NVIDIA_VISIBLE_DEVICES=0"},
       json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                    {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}}),
       false,
       "nvidia-uvm"},
      {"cpu-only, gpu container",
       "cpu-only",
       {"NVIDIA_VISIBLE_DEVICES=all"},
       json::array(),
       false,
       "hook.driver.absent"},
      // Grace Hopper: the open module for aarch64, 550 (CUDA 12.4) and 570 (CUDA 12.8), sm 9.0.
      {"gh200 550 cuda 12.4",
       "gh200-550-open",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"},
       nvDevices(1, 507),
       true,
       ""},
      {"gh200 550 cuda 12.8",
       "gh200-550-open",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.8"},
       nvDevices(1, 507),
       false,
       "hook.require.unsatisfied"},
      {"gh200 570 cuda 12.8 sm90",
       "gh200-570-open",
       {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.8", "NVIDIA_REQUIRE_ARCH=arch>=9.0"},
       nvDevices(1, 509),
       true,
       ""},
      {"gh200 570 cuda 12.9",
       "gh200-570-open",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.9"},
       nvDevices(1, 509),
       false,
       "hook.require.unsatisfied"},
      {"gh200 is not sm 10.0",
       "gh200-570-open",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_ARCH=arch>=10.0"},
       nvDevices(1, 509),
       false,
       "hook.require.unsatisfied"},
      // Grace Blackwell: four GB200 (sm 10.0) in PCI domains 0008, 0009, 0018, 0019.
      {"gb200 570 sm100",
       "gb200-570-open",
       {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.8", "NVIDIA_REQUIRE_ARCH=arch>=10.0"},
       nvDevices(4, 510),
       true,
       ""},
      {"gb200 a gpu not passed",
       "gb200-570-open",
       {"NVIDIA_VISIBLE_DEVICES=all"},
       nvDevices(3, 510),
       false,
       "hook.device.missing"},
      // A Jetson: another stack, said so, never "no driver".
      {"jetson",
       "jetson-orin-l4t",
       {"NVIDIA_VISIBLE_DEVICES=all"},
       json::array({{{"path", "/dev/nvhost-ctrl"}, {"type", "c"}, {"major", 489}, {"minor", 0}}}),
       true,
       "hook.host.jetson"},
  };
  return c;
}

}  // namespace

TEST(Arm64Node, HookAndProbeAreStaticAarch64AndAnswerVersion) {
  Arm64 a = arm64Node();
  if (!a.skip.empty()) GTEST_SKIP() << a.skip;
  for (const std::string& bin : {a.hook, a.probe}) {
    std::string file = run("file -b " + bin).out;
    EXPECT_NE(file.find("ARM aarch64"), std::string::npos) << bin << ": " << file;
    EXPECT_NE(file.find("statically linked"), std::string::npos) << bin << ": " << file;
  }
  RunResult hook = run(underQemu(a.hook) + " --version < /dev/null");
  EXPECT_EQ(hook.code, 0) << hook.err;
  EXPECT_TRUE(hook.out.starts_with("kernodeck-hook 0.")) << hook.out << hook.err;
  RunResult probe = run(underQemu(a.probe) + " --version");
  EXPECT_EQ(probe.code, 0) << probe.err;
  EXPECT_TRUE(probe.out.starts_with("kernodeck-probe 0.")) << probe.out << probe.err;
  EXPECT_EQ(probe.out, run(std::string(PROBE_BIN) + " --version").out);
  // With anything else on the line it is a usage error, as any unknown flag is.
  RunResult mixed = run(underQemu(a.probe) + " --version --json");
  EXPECT_EQ(mixed.code, 2) << mixed.out;
  EXPECT_NE(mixed.err.find("--version goes alone"), std::string::npos) << mixed.err;
}

// Each case through the amd64 hook and the arm64 one: the same exit, decision, reason and record.
TEST(Arm64Node, HookJudgesFixtureHostsAsTheAmd64BuildDoes) {
  Arm64 a = arm64Node();
  if (!a.skip.empty()) GTEST_SKIP() << a.skip;
  if (::geteuid() != 0) GTEST_SKIP() << "materialising the fixture hosts' device nodes needs root (mknod)";
  for (const Case& c : cases()) {
    std::string host = hostTree(c.host);
    ASSERT_FALSE(host.empty()) << c.name;
    HookRun arm = runHook(underQemu(a.hook), host, c.env, c.devices);
    HookRun amd = runHook(HOOK_BIN, host, c.env, c.devices);
    EXPECT_EQ(arm.code, c.starts ? 0 : 1) << c.name << "\n" << arm.err;
    ASSERT_TRUE(arm.log.is_object()) << c.name << ": no log line\n" << arm.err;
    EXPECT_EQ(arm.log["decision"], c.starts ? "allow" : "block") << c.name << "\n" << arm.log.dump(1);
    if (c.starts) {
      ASSERT_TRUE(arm.record.is_object()) << c.name;
      if (*c.code) {
        EXPECT_TRUE(verdictCodes(arm.record).count(c.code)) << c.name << "\n" << arm.record.dump(1);
      }
    } else {
      EXPECT_NE(arm.log["reason"].get<std::string>().find(c.code), std::string::npos) << c.name << arm.log.dump(1);
    }
    // The same verdict from both builds.
    EXPECT_EQ(arm.code, amd.code) << c.name;
    EXPECT_EQ(arm.log["decision"], amd.log["decision"]) << c.name;
    EXPECT_EQ(arm.log["reason"], amd.log["reason"]) << c.name;
    EXPECT_EQ(arm.record.is_object(), amd.record.is_object()) << c.name;
    if (arm.record.is_object() && amd.record.is_object()) {
      EXPECT_EQ(arm.record["host"], amd.record["host"]) << c.name;
      EXPECT_EQ(arm.record["verdicts"], amd.record["verdicts"]) << c.name;
    }
  }
}

// What the arm64 hook records of Grace hosts: domains other than 0000, sm 9.0 and 10.0 read (the
// model, and the PCI device id), the open module for aarch64; a Jetson named, not "no driver".
TEST(Arm64Node, HookRecordsGraceFactsAndNamesAJetson) {
  Arm64 a = arm64Node();
  if (!a.skip.empty()) GTEST_SKIP() << a.skip;
  if (::geteuid() != 0) GTEST_SKIP() << "materialising the fixture hosts' device nodes needs root (mknod)";
  HookRun gb =
      runHook(underQemu(a.hook), hostTree("gb200-570-open"), {"NVIDIA_VISIBLE_DEVICES=all"}, nvDevices(4, 510));
  ASSERT_TRUE(gb.record.is_object()) << gb.err;
  const json& nv = gb.record["host"]["nvidia"];
  EXPECT_EQ(nv["driver_version"], "570.133.20");
  EXPECT_EQ(nv["kernel_module"], "open");
  EXPECT_EQ(nv["max_cuda"], "12.8");
  ASSERT_EQ(nv["gpus"].size(), 4u) << nv.dump(1);
  std::vector<std::string> buses;
  for (const auto& g : nv["gpus"]) {
    buses.push_back(g["bus_location"]);
    EXPECT_EQ(g["arch"], "10.0") << g.dump();
    EXPECT_EQ(g["pci_device"], "0x2941") << g.dump();
  }
  EXPECT_EQ(buses, (std::vector<std::string>{"0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"}));

  HookRun gh = runHook(underQemu(a.hook), hostTree("gh200-550-open"), {"NVIDIA_VISIBLE_DEVICES=0"}, nvDevices(1, 507));
  ASSERT_TRUE(gh.record.is_object()) << gh.err;
  EXPECT_EQ(gh.record["host"]["nvidia"]["max_cuda"], "12.4");
  EXPECT_EQ(gh.record["host"]["nvidia"]["gpus"][0]["arch"], "9.0");
  EXPECT_EQ(gh.record["host"]["nvidia"]["gpus"][0]["bus_location"], "0009:01:00.0");

  HookRun jet = runHook(underQemu(a.hook), hostTree("jetson-orin-l4t"), {"NVIDIA_VISIBLE_DEVICES=all"}, json::array());
  EXPECT_EQ(jet.code, 0) << jet.err;
  ASSERT_TRUE(jet.record.is_object()) << jet.err;
  EXPECT_TRUE(jet.record["host"]["nvidia"].is_null());
  EXPECT_EQ(jet.record["host"]["tegra"]["release"], "R36.3.0");
  EXPECT_EQ(verdictCodes(jet.record), (std::set<std::string>{"hook.host.jetson"})) << jet.record.dump(1);
  EXPECT_EQ(jet.log["decision"], "allow") << jet.log.dump(1);
}

// Real runc, the arm64 hook (through qemu) as the createRuntime hook, on a GH200 host: a container
// whose CUDA the 570 driver runs starts and reads its host record; one that needs CUDA 12.9 is
// refused before it starts.
TEST(Arm64Node, RuncStartsWithTheArm64HookAndRefusesAnUnmetCuda) {
  Arm64 a = arm64Node();
  if (!a.skip.empty()) GTEST_SKIP() << a.skip;
  if (::geteuid() != 0 || !haveTool("runc") || !haveTool("busybox")) GTEST_SKIP() << "needs root, runc and busybox";
  std::string host = hostTree("gh200-570-open");
  ASSERT_FALSE(host.empty());
  std::string qemu = run("command -v qemu-aarch64-static").out;
  qemu = qemu.substr(0, qemu.find('\n'));
  int n = 0;
  for (const auto& [require, starts] : {std::pair{"cuda>=12.8", true}, {"cuda>=12.9", false}}) {
    std::string b = tempDir("arm64runc");
    run("mkdir -p " + b + "/rootfs/bin && cp \"$(command -v busybox)\" " + b + "/rootfs/bin/busybox && ln -s busybox " +
        b + "/rootfs/bin/sh && ln -s busybox " + b + "/rootfs/bin/cat");
    run("cd " + b + " && runc spec");
    json cfg = json::parse(readFile(b + "/config.json"));
    cfg["process"]["terminal"] = false;
    cfg["process"]["args"] = {"/bin/sh", "-c", "cat /run/kernodeck/host.json"};
    cfg["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
    cfg["process"]["env"].push_back(std::string("NVIDIA_REQUIRE_CUDA=") + require);
    cfg["root"]["readonly"] = false;
    cfg["linux"]["devices"] = nvDevices(1, 509);
    json args = json::array({"qemu-aarch64-static", a.hook, "--policy", "enforce", "--host-root", host, "--log",
                             b + "/hook.log", "createRuntime"});
    json hook = {{"path", qemu}, {"args", args}, {"timeout", 30}};
    cfg["hooks"] = json::object();
    cfg["hooks"]["createRuntime"] = json::array({hook});
    writeFile(b + "/config.json", cfg.dump(1));
    std::string id = "kdk-arm64-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
    RunResult r = run("timeout 90 runc run --bundle " + b + " " + id);
    run("runc delete -f " + id + " >/dev/null 2>&1");
    json log = json::parse(readFile(b + "/hook.log"), nullptr, false);
    if (starts) {
      ASSERT_EQ(r.code, 0) << require << "\n" << r.err;
      json rec = json::parse(r.out, nullptr, false);
      ASSERT_TRUE(rec.is_object()) << r.out;
      EXPECT_EQ(rec["decision"], "allow");
      EXPECT_EQ(rec["host"]["nvidia"]["driver_version"], "570.124.06");
      EXPECT_EQ(rec["host"]["nvidia"]["gpus"][0]["bus_location"], "0009:01:00.0");
    } else {
      EXPECT_NE(r.code, 0) << require << "\n" << r.out;
      EXPECT_EQ(r.out.find("kernodeck.host/v1"), std::string::npos) << "the container ran:\n" << r.out;
      EXPECT_NE(r.err.find("hook.require.unsatisfied"), std::string::npos) << r.err;
    }
    ASSERT_TRUE(log.is_object()) << readFile(b + "/hook.log");
    EXPECT_EQ(log["decision"], starts ? "allow" : "block");
  }
}

// The static probe on a GH200 host, through qemu, reports what the amd64 static probe reports:
// its devices step opens the host tree's nodes (made by mknod, no driver behind them: ENXIO, so
// CUDA is unreachable and said so), and its record step reads the arm64 hook's record of the
// GH200 (driver 570, CUDA 12.8) and checks the image's requirement against it.
TEST(Arm64Node, StaticProbeReadsDevicesAndTheHookRecordOnAGh200) {
  Arm64 a = arm64Node();
  if (!a.skip.empty()) GTEST_SKIP() << a.skip;
  if (::geteuid() != 0) GTEST_SKIP() << "materialising the fixture hosts' device nodes needs root (mknod)";
  if (std::string(PROBE_BIN).empty()) GTEST_SKIP() << "the amd64 static kernodeck-probe is not built";
  std::string host = hostTree("gh200-570-open");
  HookRun h = runHook(underQemu(a.hook), host, {"NVIDIA_VISIBLE_DEVICES=0"}, nvDevices(1, 509));
  ASSERT_TRUE(h.record.is_object()) << h.err;
  std::string dir = tempDir("arm64probe");
  writeFile(dir + "/host.json", h.record.dump());
  writeFile(dir + "/expect.json",
            json({{"schema", "kernodeck.expect/v1"}, {"accelerator", "cpu"}, {"nvidia", {{"require", {"cuda>=12.9"}}}}})
                .dump());
  auto both = [&](const std::string& args) {
    RunResult arm = run(underQemu(a.probe) + args), amd = run(std::string(PROBE_BIN) + args);
    json ra = json::parse(arm.out, nullptr, false), rb = json::parse(amd.out, nullptr, false);
    EXPECT_TRUE(ra.is_object()) << "exit " << arm.code << ": " << arm.out << arm.err;
    EXPECT_TRUE(rb.is_object()) << amd.out << amd.err;
    EXPECT_EQ(arm.code, amd.code) << args;
    if (!ra.is_object() || !rb.is_object()) return ra;
    for (const char* step : {"versions", "devices", "compute", "python", "reconcile"})
      EXPECT_EQ(stepStatus(ra, step), stepStatus(rb, step)) << step << "\n" << ra.dump(1);
    EXPECT_EQ(ra["devices"], rb["devices"]);
    EXPECT_EQ(ra["reconcile"], rb["reconcile"]);
    EXPECT_EQ(ra["first_error"], rb["first_error"]);
    std::set<std::string> fa, fb;
    for (const auto& f : ra["findings"]) fa.insert(f.value("code", ""));
    for (const auto& f : rb["findings"]) fb.insert(f.value("code", ""));
    EXPECT_EQ(fa, fb);
    return ra;
  };
  std::string common = " --json --dev-root " + host + " --host-record " + dir + "/host.json --host-root " + host +
                       " --expect-from " + dir + "/expect.json";
  json cuda = both(common + " --expect cuda");
  EXPECT_EQ(stepStatus(cuda, "devices"), "failed") << cuda.dump(1);
  EXPECT_NE(cuda.value("first_error", "").find("/dev/nvidiactl"), std::string::npos) << cuda.dump(1);
  json cpu = both(common + " --expect cpu");
  EXPECT_EQ(stepStatus(cpu, "devices"), "passed") << cpu.dump(1);
  EXPECT_EQ(stepStatus(cpu, "reconcile"), "passed") << cpu.dump(1);
  EXPECT_EQ(cpu["subject"]["host_record_source"], dir + "/host.json");
  EXPECT_EQ(cpu["reconcile"]["host_driver"], "570.124.06") << cpu["reconcile"].dump(1);
  EXPECT_EQ(cpu["reconcile"]["host_max_cuda"], "12.8");
  EXPECT_EQ(countFindings(cpu, "probe.require.unsatisfied"), 1) << cpu["findings"].dump(1);
  EXPECT_EQ(countFindings(cpu, "probe.host_record.invalid"), 0) << cpu["findings"].dump(1);
}

// An arm64 image for Grace nodes: torch's aarch64 CUDA wheel (manylinux_2_28_aarch64, +cu128)
// is inventoried and gives the expectation the hook checks on a GH200/GB200; the same wheel in an
// amd64 image is one that cannot load there. (No qemu: the audit reads the image.)
TEST(Arm64Image, TorchAarch64CudaWheelInInventoryAndExpectation) {
  std::string site = "usr/local/lib/python3.11/site-packages";
  std::string d = site + "/torch-2.7.0+cu128.dist-info/";
  json entries = json::array(
      {{{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
       {{"path", site + "/torch/version.py"},
        {"content", "__version__ = '2.7.0+cu128'\ncuda = '12.8'\nhip = None\ngit_version = 'x'\n"}},
       {{"path", d + "METADATA"}, {"content", "Metadata-Version: 2.1\nName: torch\nVersion: 2.7.0+cu128\n"}},
       {{"path", d + "INSTALLER"}, {"content", "pip\n"}},
       {{"path", d + "WHEEL"},
        {"content",
         "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\nRoot-Is-Purelib: false\n"
         "Tag: cp311-cp311-manylinux_2_28_aarch64\n"}}});
  auto audit = [&](const std::string& arch, json* expect) {
    json spec = {
        {"architecture", arch},
        // As NVIDIA's arm64 (SBSA) CUDA base images set them.
        {"config", {{"Env", {"PYTHON_VERSION=3.11.9", "CUDA_VERSION=12.8.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.8"}}}},
        {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
    std::string base = tempDir("arm64img");
    EXPECT_FALSE(mkimage(spec, base + "/img").empty());
    RunResult raw =
        run(std::string(KERNODECK_BIN) + " audit --json --expect-out " + base + "/expect.json oci:" + base + "/img");
    json r = json::parse(raw.out, nullptr, false);
    if (expect) *expect = json::parse(readFile(base + "/expect.json"), nullptr, false);
    return r;
  };
  json e;
  json arm = audit("arm64", &e);
  ASSERT_TRUE(arm.is_object());
  EXPECT_EQ(countFindings(arm, "python.wheel.unsupported"), 0) << arm["findings"].dump(1);
  ASSERT_TRUE(e.is_object());
  EXPECT_EQ(e["torch"]["version"], "2.7.0+cu128") << e.dump(1);
  EXPECT_EQ(e["torch"]["cuda"], "12.8");
  EXPECT_EQ(e["accelerator"], "cuda");
  EXPECT_EQ(e["nvidia"]["require"][0], "cuda>=12.8");
  json amd = audit("amd64", nullptr);
  ASSERT_TRUE(amd.is_object());
  EXPECT_EQ(countFindings(amd, "python.wheel.unsupported"), 1) << amd["findings"].dump(1);
}

}  // namespace integration_arm64_node_test
