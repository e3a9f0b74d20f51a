// kernodeck-hook under real runc: a busybox bundle started with the hook as a
// createRuntime hook, against each fake host tree, in warn and enforce mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "support.h"

namespace integration_hook_runc_test {

using nlohmann::json;
using namespace kdktest;

namespace {

struct Bundle {
  std::string dir, log;
};

std::string hostTree(const std::string& name) {
  std::string d = tempDir("hosttree") + "/" + name;
  RunResult r = run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + name + " " + d);
  return r.code == 0 ? d : std::string();
}

// A busybox bundle whose createRuntime hook is kernodeck-hook with `hookArgs` (after argv[0]).
Bundle makeBundleArgs(const std::vector<std::string>& hookArgs, const json& env, const json& devices) {
  Bundle b;
  b.dir = tempDir("bundle");
  b.log = b.dir + "/hook.log";
  run("mkdir -p " + b.dir + "/rootfs/bin && cp \"$(command -v busybox)\" " + b.dir +
      "/rootfs/bin/busybox && ln -s busybox " + b.dir + "/rootfs/bin/sh && ln -s busybox " + b.dir + "/rootfs/bin/cat");
  run("cd " + b.dir + " && runc spec");
  json cfg = json::parse(readFile(b.dir + "/config.json"));
  cfg["process"]["terminal"] = false;
  cfg["process"]["args"] = {"/bin/sh", "-c", "cat /run/kernodeck/host.json; exit 0"};
  for (const auto& e : env) cfg["process"]["env"].push_back(e);
  cfg["root"]["readonly"] = false;
  cfg["linux"]["devices"] = devices;
  json args = {"kernodeck-hook"};
  for (const auto& a : hookArgs) args.push_back(a == "LOG" ? b.log : a);
  cfg["hooks"] = {{"createRuntime", {{{"path", HOOK_BIN}, {"args", args}, {"timeout", 10}}}}};
  writeFile(b.dir + "/config.json", cfg.dump(1));
  return b;
}

Bundle makeBundle(const std::string& policy, const std::string& hostRoot, const json& env, const json& devices) {
  return makeBundleArgs({"--policy", policy, "--host-root", hostRoot, "--log", "LOG", "createRuntime"}, env, devices);
}

json nvDevices(int gpus, int uvmMajor) {
  json d = json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                        {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", uvmMajor}, {"minor", 0}}});
  for (int i = 0; i < gpus; ++i)
    d.push_back({{"path", "/dev/nvidia" + std::to_string(i)}, {"type", "c"}, {"major", 195}, {"minor", i}});
  return d;
}

struct Case {
  const char* name;
  const char* host;
  std::vector<std::string> env;
  json devices;
  bool enforceStarts;
  const char* refusal;  // expected in runc's error when refused
};

}  // namespace

TEST(HookRunc, WarnAlwaysStartsEnforceRefusesWhatCannotWork) {
  if (::geteuid() != 0 || !haveTool("runc") || !haveTool("busybox")) GTEST_SKIP() << "needs root, runc and busybox";
  std::vector<Case> cases = {
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
      {"470 with an old cuda",
       "driver-470",
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=11.0"},
       nvDevices(1, 509),
       true,
       ""},
      {"missing nvidia-uvm",
       "no-uvm",
       {"NVIDIA_VISIBLE_DEVICES=0"},
       json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                    {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}}),
       false,
       "nvidia-uvm"},
      {"a100 mig",
       "a100-mig",
       {"NVIDIA_VISIBLE_DEVICES=0:1"},
       [] {
         json d = nvDevices(1, 508);
         // gpu0/gi1's access capability and its ci0's, as the NVIDIA toolkit passes a MIG device
         d.push_back({{"path", "/dev/nvidia-caps/nvidia-cap12"}, {"type", "c"}, {"major", 511}, {"minor", 12}});
         d.push_back({{"path", "/dev/nvidia-caps/nvidia-cap13"}, {"type", "c"}, {"major", 511}, {"minor", 13}});
         return d;
       }(),
       true,
       ""},
      {"mi300",
       "mi300",
       {},
       json::array({{{"path", "/dev/kfd"}, {"type", "c"}, {"major", 236}, {"minor", 0}},
                    {{"path", "/dev/dri/renderD128"}, {"type", "c"}, {"major", 226}, {"minor", 128}}}),
       true,
       ""},
      {"cpu-only, cpu container", "cpu-only", {"PATH=/bin"}, json::array(), true, ""},
      {"cpu-only, gpu container",
       "cpu-only",
       {"NVIDIA_VISIBLE_DEVICES=all"},
       json::array(),
       false,
       "hook.driver.absent"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::string host = hostTree(c.host);
    ASSERT_FALSE(host.empty()) << c.name;
    json env = json::array();
    for (const auto& e : c.env) env.push_back(e);
    for (const char* policy : {"warn", "enforce"}) {
      Bundle b = makeBundle(policy, host, env, c.devices);
      std::string id = "kdk-hook-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
      RunResult r = run("timeout 60 runc run --bundle " + b.dir + " " + id);
      run("runc delete -f " + id + " >/dev/null 2>&1");
      bool starts = std::string(policy) == "warn" || c.enforceStarts;
      std::string where = std::string(c.name) + " [" + policy + "]";
      if (starts) {
        ASSERT_EQ(r.code, 0) << where << "\n" << r.err;
        json rec = json::parse(r.out, nullptr, false);  // the container read its host record
        ASSERT_TRUE(rec.is_object()) << where << "\n" << r.out;
        EXPECT_EQ(rec["schema"], "kernodeck.host/v1") << where;
        EXPECT_EQ(rec["decision"], c.enforceStarts ? "allow" : "warn") << where;
      } else {
        EXPECT_NE(r.code, 0) << where;
        EXPECT_NE(r.err.find(c.refusal), std::string::npos) << where << "\n" << r.err;
      }
      json logLine = json::parse(readFile(b.log), nullptr, false);
      ASSERT_TRUE(logLine.is_object()) << where << ": " << readFile(b.log);
      EXPECT_EQ(logLine["container"], id) << where;
      EXPECT_EQ(logLine["decision"], !c.enforceStarts ? (starts ? "warn" : "block") : "allow") << where;
    }
  }
}

// Issue 49, section 5: what an image (or a runtime's environment) sets reaches nothing the hook
// decides. The container's process environment and the hook's own carry LD_PRELOAD,
// LD_LIBRARY_PATH and every KERNODECK_* name; the hook refuses and allows exactly as without them.
TEST(HookRunc, AnImagesEnvironmentChangesNothingTheHookDecides) {
  if (::geteuid() != 0 || !haveTool("runc") || !haveTool("busybox")) GTEST_SKIP() << "needs root, runc and busybox";
  json hostile =
      json::array({"LD_PRELOAD=/nonexistent/evil.so", "LD_LIBRARY_PATH=/nonexistent/lib", "KERNODECK_POLICY=warn",
                   "KERNODECK_HOST_ROOT=/", "KERNODECK_LOG=/tmp/kdk-evil.log", "KERNODECK_IMAGE=evil",
                   "KERNODECK_EXPECT=/nonexistent", "KERNODECK_PROFILE=stages", "KERNODECK_DEBUG=1"});
  struct {
    const char* host;
    std::vector<std::string> env;
    int gpus, uvm;
    const char* decision;
  } cases[] = {{"driver-470", {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"}, 1, 509, "block"},
               {"h100-550-open", {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.1"}, 2, 508, "allow"}};
  int n = 0;
  for (const auto& c : cases) {
    std::string host = hostTree(c.host);
    ASSERT_FALSE(host.empty()) << c.host;
    std::vector<json> logs;
    for (bool evil : {false, true}) {
      json env = json::array();
      for (const auto& e : c.env) env.push_back(e);
      if (evil)
        for (const auto& e : hostile) env.push_back(e);
      Bundle b = makeBundle("enforce", host, env, nvDevices(c.gpus, c.uvm));
      if (evil) {  // the hook's own environment too, as a careless hook definition would pass it
        json cfg = json::parse(readFile(b.dir + "/config.json"));
        json hookEnv = hostile;
        hookEnv.push_back("PATH=/usr/bin:/bin");
        cfg["hooks"]["createRuntime"][0]["env"] = hookEnv;
        writeFile(b.dir + "/config.json", cfg.dump(1));
      }
      std::string id = "kdk-hook-env-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
      RunResult r = run("timeout 60 runc run --bundle " + b.dir + " " + id);
      run("runc delete -f " + id + " >/dev/null 2>&1");
      std::string where = std::string(c.host) + (evil ? " [hostile environment]" : "");
      EXPECT_EQ(r.code == 0, std::string(c.decision) == "allow") << where << "\n" << r.err;
      json line = json::parse(readFile(b.log), nullptr, false);
      ASSERT_TRUE(line.is_object()) << where << ": " << readFile(b.log);
      EXPECT_EQ(line["decision"], c.decision) << where;
      json codes = json::array();
      for (const auto& f : line.value("findings", json::array())) codes.push_back(f.value("code", ""));
      logs.push_back(codes);
    }
    EXPECT_EQ(logs[0], logs[1]) << c.host << ": the environment changed the hook's findings";
  }
  EXPECT_FALSE(exists("/tmp/kdk-evil.log"));
}

// Issue 50: expect.json's gpu_code judged per library against the node's real GPUs, known here
// only by their PCI device ids (the driver calls both "NVIDIA Graphics Device"). torch with
// sm_80;sm_90 SASS and no PTX starts on the H100 and is refused on the B200, naming the library;
// with compute_90 PTX it starts on both, with a warning on the B200.
TEST(HookRunc, GpuCodeOfEachLibraryIsJudgedAgainstTheNodesGpus) {
  if (::geteuid() != 0 || !haveTool("runc") || !haveTool("busybox")) GTEST_SKIP() << "needs root, runc and busybox";
  auto expectation = [](const json& ptx) {
    return json({{"schema", "kernodeck.expect/v1"},
                 {"accelerator", "cuda"},
                 {"gpu_code",
                  {{{"library", "/usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so"},
                    {"layer", "sha256:" + std::string(64, 'a')},
                    {"sass", {"sm_80", "sm_90"}},
                    {"ptx", ptx}},
                   {{"library", "/usr/local/lib/python3.11/dist-packages/torch/lib/libc10_cuda.so"},
                    {"sass", {"sm_80", "sm_90", "sm_100"}},
                    {"ptx", json::array()}}}}})
        .dump();
  };
  struct Case {
    const char* host;
    bool ptx;
    const char* policy;
    bool starts;
    const char* code;  // the one verdict expected, nullptr for none
  } cases[] = {
      {"h100-pci-580", false, "enforce", true, nullptr},
      {"b200-pci-580", false, "enforce", false, "hook.arch.unsupported"},
      {"b200-pci-580", false, "warn", true, "hook.arch.unsupported"},
      {"h100-pci-580", true, "enforce", true, nullptr},
      {"b200-pci-580", true, "enforce", true, "hook.arch.ptx_only"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::string where = std::string(c.host) + (c.ptx ? " with PTX" : " SASS only") + " [" + c.policy + "]";
    std::string host = hostTree(c.host);
    ASSERT_FALSE(host.empty()) << where;
    Bundle b = makeBundle(c.policy, host, json::array({"NVIDIA_VISIBLE_DEVICES=all"}), nvDevices(1, 508));
    run("mkdir -p " + b.dir + "/rootfs/etc/kernodeck");
    writeFile(b.dir + "/rootfs/etc/kernodeck/expect.json",
              expectation(c.ptx ? json::array({"compute_90"}) : json::array()));
    std::string id = "kdk-gpucode-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
    RunResult r = run("timeout 60 runc run --bundle " + b.dir + " " + id);
    run("runc delete -f " + id + " >/dev/null 2>&1");
    json logLine = json::parse(readFile(b.log), nullptr, false);
    ASSERT_TRUE(logLine.is_object()) << where << ": " << readFile(b.log);
    std::vector<std::string> codes;
    for (const auto& v : logLine["verdicts"]) codes.push_back(v.value("code", ""));
    if (!c.code) {
      EXPECT_TRUE(codes.empty()) << where << ": " << logLine.dump();
    } else {
      // Only libtorch_cuda.so lacks code for the B200: libc10_cuda.so carries sm_100.
      ASSERT_EQ(codes, std::vector<std::string>{c.code}) << where << ": " << logLine.dump();
      std::string msg = logLine["verdicts"][0].value("message", "");
      EXPECT_NE(msg.find("libtorch_cuda.so"), std::string::npos) << where << ": " << msg;
      EXPECT_EQ(msg.find("libc10_cuda.so"), std::string::npos) << where << ": " << msg;
      EXPECT_NE(msg.find("NVIDIA Graphics Device [B200] (0000:1b:00.0), compute capability 10.0"), std::string::npos)
          << where << ": " << msg;
    }
    if (c.starts) {
      ASSERT_EQ(r.code, 0) << where << "\n" << r.err;
      json rec = json::parse(r.out, nullptr, false);
      ASSERT_TRUE(rec.is_object()) << where << "\n" << r.out;
      EXPECT_EQ(logLine["decision"], c.code && std::string(c.code) == "hook.arch.unsupported" ? "warn" : "allow")
          << where;
    } else {
      EXPECT_NE(r.code, 0) << where;
      EXPECT_NE(r.err.find("refused: hook.arch.unsupported"), std::string::npos) << where << "\n" << r.err;
      EXPECT_NE(r.err.find("libtorch_cuda.so"), std::string::npos) << where << "\n" << r.err;
      EXPECT_EQ(logLine["decision"], "block") << where;
    }
  }
}

TEST(HookRunc, GarbageStdinNeverHangs) {
  RunResult w = run("printf 'garbage' | timeout 10 " + std::string(HOOK_BIN) + " --policy warn");
  EXPECT_EQ(w.code, 0);
  RunResult e = run("printf '' | timeout 10 " + std::string(HOOK_BIN) + " --policy enforce");
  EXPECT_EQ(e.code, 1);
  EXPECT_NE(e.err.find("empty"), std::string::npos);
  // stdin left open and silent: the internal limit ends the hook, well before timeout's 10 s.
  auto t0 = std::chrono::steady_clock::now();
  RunResult s = run("bash -c 'timeout 10 " + std::string(HOOK_BIN) +
                    " --policy enforce --timeout-ms 500 < <(exec sleep 20 2>/dev/null)'");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(s.code, 124) << "the hook hung";
  EXPECT_EQ(s.code, 1) << s.err;  // enforce: no state arrived in time
  EXPECT_LT(secs, 5.0);
  EXPECT_EQ(run("printf '{}' | " + std::string(HOOK_BIN) + " --policy warn --bogus-flag").code, 0);
}

namespace {

// A bundle on disk with no runtime: config.json and an empty rootfs, and the state a runtime
// would write on the hook's stdin.
struct PlainBundle {
  std::string dir, state;
};

PlainBundle plainBundle(const json& env) {
  PlainBundle b;
  b.dir = tempDir("hookcli");
  run("mkdir -p " + b.dir + "/rootfs/etc/kernodeck");
  json cfg = {
      {"ociVersion", "1.0.2"}, {"root", {{"path", "rootfs"}}}, {"process", {{"env", env}, {"args", {"/bin/sh"}}}}};
  writeFile(b.dir + "/config.json", cfg.dump());
  b.state =
      json({{"ociVersion", "1.0.2"}, {"id", "cli1"}, {"status", "creating"}, {"pid", 0}, {"bundle", b.dir}}).dump();
  writeFile(b.dir + "/state.json", b.state);
  return b;
}

std::string cpuHost() { return std::string(SOURCE_DIR) + "/tests/fixtures/hosts/cpu-only"; }

}  // namespace

// Issue 13: no mistake in the hook's command line switches enforcement off. Each line runs the
// real binary with the state on stdin; the policy holds even when the rest cannot be parsed.
TEST(HookCli, ABrokenCommandLineRefusesUnderEnforceAndStartsUnderWarn) {
  struct Case {
    std::string args;  // after the binary; LOG is the log file
    int code;          // expected exit status: 2 is a refusal for a usage error
    const char* says;  // in the one stderr line
  };
  std::string host = cpuHost();
  std::vector<Case> cases = {
      {"--policy enforce --host-root " + host + " --log LOG createRuntime", 0, ""},
      {"--policy enforce --host_root " + host + " --log LOG", 2,
       "refused: command line: unknown option '--host_root', did you mean --host-root?"},
      {"--policy enforce --timeout-ms abc --log LOG", 2,
       "refused: command line: --timeout-ms takes a number of milliseconds, not 'abc'"},
      {"--policy enforce --timeout-ms 0 --log LOG", 2, "refused: command line: --timeout-ms 0 is out of range"},
      {"--policy enforce --policy enforce --log LOG", 2, "refused: command line: --policy is given 2 times"},
      {"--policy warn --policy warn --log LOG", 2,
       "refused: command line: --policy is given 2 times (a broken policy is read as enforce)"},
      {"--policy Enforce --log LOG", 2, "refused: command line: --policy takes warn or enforce, not 'Enforce'"},
      {"--policy enforce --bogus-flag --log LOG", 2, "refused: command line: unknown option '--bogus-flag'"},
      {"--policy warn --host_root " + host + " --log LOG", 0, "warning: command line: unknown option '--host_root'"},
      {"--timeout-ms abc --log LOG", 0, "warning: command line: --timeout-ms takes a number"},
      // The policy flag misspelt: meant as a policy, so a broken one, so enforce.
      {"--polcy warn --log LOG", 2, "refused: command line: '--polcy' looks like a misspelt --policy"},
  };
  for (const auto& c : cases) {
    PlainBundle b = plainBundle({"PATH=/bin"});
    std::string log = b.dir + "/hook.log", args = c.args;
    args.replace(args.find("LOG"), 3, log);
    RunResult r = run("timeout 10 " + std::string(HOOK_BIN) + " " + args + " < " + b.dir + "/state.json");
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    if (*c.says) {
      EXPECT_NE(r.err.find(std::string("kernodeck-hook: ") + c.says), std::string::npos) << c.args << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    }
    json line = json::parse(readFile(log), nullptr, false);
    ASSERT_TRUE(line.is_object()) << c.args << ": no log line: " << readFile(log);
    EXPECT_EQ(line["container"], "cli1") << c.args;
    EXPECT_EQ(line["decision"], c.code ? "block" : *c.says ? "warn" : "allow") << c.args;
  }
}

// Issue 13: an expectation that is there but unusable, and a host root that is not one, are
// findings of their own; through the real binary, state on stdin.
TEST(HookCli, AnUnusableExpectationOrHostRootIsAnErrorFinding) {
  struct Case {
    const char* name;
    std::string expect;  // written to /etc/kernodeck/expect.json; "FIFO" makes a FIFO
    std::string hostRoot;
    const char* code;
  };
  std::vector<Case> cases = {
      {"truncated expectation", R"({"schema":"kernodeck.expect/v1",)", cpuHost(), "hook.expectation.invalid"},
      {"array expectation", "[]", cpuHost(), "hook.expectation.invalid"},
      {"FIFO expectation", "FIFO", cpuHost(), "hook.expectation.invalid"},
      // Issue 29: a link that does not resolve inside the container root is invalid, like a loop.
      {"dangling link", "DANGLING", cpuHost(), "hook.expectation.invalid"},
      {"missing host root", "", "/nonexistent/kdk-host", "hook.hostroot.unreadable"},
  };
  for (const auto& c : cases)
    for (const char* policy : {"warn", "enforce"}) {
      std::string where = std::string(c.name) + " [" + policy + "]";
      PlainBundle b = plainBundle({"NVIDIA_VISIBLE_DEVICES=all"});
      std::string file = b.dir + "/rootfs/etc/kernodeck/expect.json";
      if (c.expect == "FIFO")
        run("mkfifo " + file);
      else if (c.expect == "DANGLING")
        run("ln -s ../../nowhere/expect.json " + file);
      else if (!c.expect.empty())
        writeFile(file, c.expect);
      RunResult r = run("timeout 10 " + std::string(HOOK_BIN) + " --policy " + policy + " --host-root " + c.hostRoot +
                        " --log " + b.dir + "/hook.log < " + b.dir + "/state.json");
      bool enforce = std::string(policy) == "enforce";
      EXPECT_EQ(r.code, enforce ? 1 : 0) << where << "\n" << r.err;
      EXPECT_NE(r.err.find(c.code), std::string::npos) << where << "\n" << r.err;
      EXPECT_EQ(r.err.find("no NVIDIA driver"), std::string::npos) << where << "\n" << r.err;
      json line = json::parse(readFile(b.dir + "/hook.log"), nullptr, false);
      ASSERT_TRUE(line.is_object()) << where;
      EXPECT_EQ(line["verdicts"][0]["code"], c.code) << where;
      json rec = json::parse(readFile(b.dir + "/rootfs/run/kernodeck/host.json"), nullptr, false);
      if (enforce)
        EXPECT_TRUE(rec.is_discarded()) << where;
      else
        EXPECT_EQ(rec["verdicts"][0]["code"], c.code) << where;
    }
}

// The same mistakes under real runc: the runtime shows the refusal; warn starts the container,
// which reads its host record.
TEST(HookRunc, MistakesRefuseUnderEnforceAndStartUnderWarn) {
  if (::geteuid() != 0 || !haveTool("runc") || !haveTool("busybox")) GTEST_SKIP() << "needs root, runc and busybox";
  std::string host = hostTree("cpu-only");
  ASSERT_FALSE(host.empty());
  struct Case {
    const char* name;
    std::vector<std::string> args;  // after --policy P
    std::string expect;             // expect.json content, "" for none
    const char* says;
  };
  std::vector<Case> cases = {
      {"misspelt flag", {"--host_root", host, "--log", "LOG"}, "", "command line: unknown option '--host_root'"},
      {"bad timeout",
       {"--host-root", host, "--timeout-ms", "abc", "--log", "LOG"},
       "",
       "command line: --timeout-ms takes a number"},
      {"truncated expectation", {"--host-root", host, "--log", "LOG"}, R"({"schema":)", "hook.expectation.invalid"},
      {"missing host root", {"--host-root", "/nonexistent/kdk", "--log", "LOG"}, "", "hook.hostroot.unreadable"},
  };
  int n = 0;
  for (const auto& c : cases)
    for (const char* policy : {"warn", "enforce"}) {
      std::string where = std::string(c.name) + " [" + policy + "]";
      std::vector<std::string> args = {"--policy", policy};
      args.insert(args.end(), c.args.begin(), c.args.end());
      args.push_back("createRuntime");
      Bundle b = makeBundleArgs(args, json::array({"PATH=/bin"}), json::array());
      if (!c.expect.empty()) {
        run("mkdir -p " + b.dir + "/rootfs/etc/kernodeck");
        writeFile(b.dir + "/rootfs/etc/kernodeck/expect.json", c.expect);
      }
      std::string id = "kdk-mistake-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
      RunResult r = run("timeout 60 runc run --bundle " + b.dir + " " + id);
      run("runc delete -f " + id + " >/dev/null 2>&1");
      json logLine = json::parse(readFile(b.log), nullptr, false);
      ASSERT_TRUE(logLine.is_object()) << where << ": " << readFile(b.log);
      if (std::string(policy) == "enforce") {
        EXPECT_NE(r.code, 0) << where;
        EXPECT_NE(r.err.find(std::string("refused: ") + c.says), std::string::npos) << where << "\n" << r.err;
        EXPECT_EQ(logLine["decision"], "block") << where;
      } else {
        ASSERT_EQ(r.code, 0) << where << "\n" << r.err;
        EXPECT_EQ(logLine["decision"], "warn") << where;
        EXPECT_NE(logLine["reason"].get<std::string>().find(c.says), std::string::npos) << where;
        if (std::string(c.says).starts_with("hook.")) {  // checked, so the container has its record
          json rec = json::parse(r.out, nullptr, false);
          ASSERT_TRUE(rec.is_object()) << where << "\n" << r.out;
          EXPECT_EQ(rec["verdicts"][0]["code"], c.says) << where;
        }
      }
    }
}

// hooks/install takes every hook flag, checks them with the hook itself, and installs nothing
// when they would not parse.
TEST(HookInstall, EveryFlagIsPassedAndCheckedFirst) {
  std::string dest = tempDir("install");
  std::string install = std::string(SOURCE_DIR) + "/hooks/install --binary " + HOOK_BIN + " --dest-root " + dest;
  run("mkdir -p " + dest + "/host");  // --host-root is checked under the destination root
  RunResult ok = run(install + " --policy enforce --host-root /host --timeout-ms 1500 --log /var/log/k.log");
  ASSERT_EQ(ok.code, 0) << ok.err;
  json d = json::parse(readFile(dest + "/etc/containers/oci/hooks.d/kernodeck-hook.json"), nullptr, false);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["hook"]["args"], json({"kernodeck-hook", "--policy", "enforce", "--host-root", "/host", "--timeout-ms",
                                     "1500", "--log", "/var/log/k.log", "createRuntime"}));
  EXPECT_EQ(readFile(dest + "/usr/share/containers/oci/hooks.d/kernodeck-hook.json"),
            readFile(dest + "/etc/containers/oci/hooks.d/kernodeck-hook.json"));
  // One route: the CDI spec replaces the hooks.d files (a container would run the hook twice).
  RunResult cdiRoute =
      run(install + " --policy enforce --host-root /host --timeout-ms 1500 --log /var/log/k.log --cdi-dir /etc/cdi");
  ASSERT_EQ(cdiRoute.code, 0) << cdiRoute.err;
  json cdi = json::parse(readFile(dest + "/etc/cdi/kernodeck.json"), nullptr, false);
  EXPECT_EQ(cdi["devices"][0]["containerEdits"]["hooks"][0]["args"], d["hook"]["args"]);
  EXPECT_EQ(run("test -e " + dest + "/etc/containers/oci/hooks.d/kernodeck-hook.json").code, 1);
  EXPECT_EQ(run("test -e " + dest + "/usr/share/containers/oci/hooks.d/kernodeck-hook.json").code, 1);
  std::string fresh = tempDir("install");
  for (const char* bad : {"--policy Enforce", "--timeout-ms abc", "--host_root /"}) {
    RunResult r =
        run(std::string(SOURCE_DIR) + "/hooks/install --binary " + HOOK_BIN + " --dest-root " + fresh + " " + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_FALSE(r.err.empty()) << bad;
    EXPECT_EQ(run("test -e " + fresh + "/usr/local/bin/kernodeck-hook").code, 1) << bad << ": installed anyway";
  }
}

// Issue 51 §1: the installer's registrations come and go whole. A failed CDI install leaves the
// hooks.d route as it was; another route replaces the earlier one only once it is written (the
// injected spec restored byte for byte); a CDI entry made by hand is named in a warning; and
// uninstall --purge leaves nothing of ours under the root, every spec as it was before.
TEST(HookInstall, RoutesReplaceEachOtherWholeAndUninstallLeavesNothing) {
  std::string dest = tempDir("routes");
  std::string install = std::string(SOURCE_DIR) + "/hooks/install --binary " + HOOK_BIN + " --dest-root " + dest;
  std::string hooksD = dest + "/etc/containers/oci/hooks.d/kernodeck-hook.json";
  RunResult first = run(install + " --policy warn");
  ASSERT_EQ(first.code, 0) << first.err;
  std::string registered = readFile(hooksD);
  EXPECT_NE(registered.find("\"warn\""), std::string::npos) << registered;
  EXPECT_NE(readFile(dest + "/var/lib/kernodeck-hook/registered").find("hooks-d /etc/containers/oci/hooks.d/kernodeck-hook.json"),
            std::string::npos);
  // No spec there: the CDI install fails, and the hooks.d route is intact (it was deleted first
  // before issue 51, leaving the node with no hook at all).
  RunResult failed = run(install + " --policy enforce --cdi-inject /etc/cdi/nvidia.yaml");
  EXPECT_EQ(failed.code, 3) << failed.err;
  EXPECT_NE(failed.err.find("nvidia.yaml"), std::string::npos) << failed.err;
  EXPECT_EQ(readFile(hooksD), registered);
  EXPECT_EQ(readFile(dest + "/usr/share/containers/oci/hooks.d/kernodeck-hook.json"), registered);
  // With the spec there, CDI replaces hooks.d; then hooks.d replaces CDI, restoring the spec.
  std::string spec = "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n"
                     "    deviceNodes:\n    - path: /dev/nvidia0\n";
  ASSERT_EQ(run("mkdir -p " + dest + "/etc/cdi").code, 0);
  writeFile(dest + "/etc/cdi/nvidia.yaml", spec);
  RunResult cdi = run(install + " --policy enforce --cdi-inject /etc/cdi/nvidia.yaml");
  ASSERT_EQ(cdi.code, 0) << cdi.err;
  EXPECT_NE(cdi.err.find("removing the earlier hooks-d registration in /etc/containers/oci/hooks.d/kernodeck-hook.json"),
            std::string::npos)
      << cdi.err;
  EXPECT_FALSE(exists(hooksD));
  EXPECT_NE(readFile(dest + "/etc/cdi/nvidia.yaml").find("kernodeck-hook"), std::string::npos);
  RunResult back = run(install + " --policy warn");
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_NE(back.err.find("removing the earlier cdi-inject registration in /etc/cdi/nvidia.yaml"), std::string::npos)
      << back.err;
  EXPECT_EQ(readFile(dest + "/etc/cdi/nvidia.yaml"), spec);
  EXPECT_FALSE(exists(dest + "/etc/cdi/nvidia.yaml.orig"));
  EXPECT_FALSE(exists(dest + "/etc/cdi/nvidia.yaml.kernodeck-backup"));
  EXPECT_TRUE(exists(hooksD));
  // A CDI entry no install recorded: both routes would run; the install says so, naming it.
  ASSERT_EQ(run(std::string(HOOK_BIN) + " cdi inject " + dest + "/etc/cdi/nvidia.yaml --binary " + HOOK_BIN).code, 0);
  RunResult both = run(install + " --policy warn");
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NE(both.err.find("warning: /etc/cdi/nvidia.yaml runs kernodeck-hook too"), std::string::npos) << both.err;
  // Uninstall: every registration, the hand-made one included, the copy, the record, the log.
  RunResult un = run(std::string(SOURCE_DIR) + "/hooks/install --uninstall --purge --dest-root " + dest);
  ASSERT_EQ(un.code, 0) << un.err;
  EXPECT_EQ(readFile(dest + "/etc/cdi/nvidia.yaml"), spec);
  RunResult left = run("cd " + dest + " && find . -name '*kernodeck*' && find . -type f | xargs grep -l kernodeck-hook");
  EXPECT_EQ(left.out, "") << left.out;
}

// `kernodeck-hook COMMAND --help` answers for every command, with an example, and the hook's own
// --help says where it logs, how to switch warn and enforce and how to uninstall.
TEST(HookInstall, EverySubcommandAnswersHelp) {
  for (const char* cmd : {"cdi spec", "cdi inject", "cdi remove", "runc-config", "hooks-d", "install", "uninstall"}) {
    RunResult r = run(std::string(HOOK_BIN) + " " + cmd + " --help </dev/null");
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
    EXPECT_EQ(r.out.rfind("usage: kernodeck-hook ", 0), 0u) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("kernodeck-hook " + std::string(cmd)), std::string::npos) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("example"), std::string::npos) << cmd << ": " << r.out;
  }
  RunResult h = run(std::string(HOOK_BIN) + " --help </dev/null");
  EXPECT_NE(h.out.find("/var/log/kernodeck/hook.log"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("kernodeck-hook install [--policy warn|enforce]"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("kernodeck-hook uninstall"), std::string::npos) << h.out;
}

// `cdi inject` and `runc-config` on files: exit 2 for what is not the document they take, 3 when
// the file cannot be read; a second run changes nothing; the replaced file is kept.
TEST(HookInstall, ConfigCommandsRefuseWhatTheyDoNotTakeAndAreIdempotent) {
  std::string d = tempDir("cdiedit");
  std::string hook = std::string(HOOK_BIN);
  writeFile(d + "/nodevices.yaml", "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n");
  writeFile(d + "/bomb.yaml", "a: &a [x, x]\nb: &b [*a, *a]\n");
  writeFile(d + "/yaml-named.json", "cdiVersion: 0.5.0\n");
  writeFile(d + "/array.json", "[]");
  writeFile(
      d + "/nvidia.json",
      R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0"}]}}]})");
  struct Case {
    std::string args;
    int code;
    const char* says;
  } cases[] = {
      {"cdi inject " + d + "/nodevices.yaml", 2, "is not a CDI spec: devices is missing"},
      {"cdi inject " + d + "/bomb.yaml", 2,
       "bomb.yaml is not usable YAML: YAML line 2, column 8: aliases (*a) are not supported"},
      {"cdi inject " + d + "/yaml-named.json", 2, "is not JSON (a YAML spec must be named .yaml or .yml)"},
      {"cdi spec --format toml", 2, "--format takes json or yaml, not 'toml'"},
      {"cdi spec --format yaml --output " + d + "/x.json", 2, "does not match the name"},
      {"runc-config " + d + "/nvidia.json --format yaml", 2, "--format is a flag of cdi spec only"},
      {"cdi spec --format yaml --host-root \"$(printf '/h\\377')\"", 2, "' is not UTF-8"},
      {"cdi inject " + d + "/array.json", 2, "is not a CDI spec: a CDI spec is an object"},
      {"cdi inject " + d + "/missing.json", 3, "missing.json"},
      {"runc-config " + d + "/nvidia.json", 2, "not an OCI runtime config"},
      {"cdi inject " + d + "/nvidia.json --policy Enforce", 2, "--policy takes warn or enforce"},
      {"runc-config " + d + "/nvidia.json --polcy enforce", 2, "'--polcy' looks like a misspelt --policy"},
      {"cdi inject " + d + "/nvidia.json --host_root /", 2, "unknown option '--host_root', did you mean --host-root?"},
      {"cdi frobnicate", 2, "unknown command 'cdi frobnicate'"},
  };
  for (const auto& c : cases) {
    RunResult r = run(hook + " " + c.args + " --binary " + hook);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  std::string original = readFile(d + "/nvidia.json");
  ASSERT_EQ(run(hook + " cdi inject " + d + "/nvidia.json --policy enforce --binary " + hook).code, 0);
  EXPECT_EQ(readFile(d + "/nvidia.json.kernodeck-backup"), original);
  std::string once = readFile(d + "/nvidia.json");
  RunResult again = run(hook + " cdi inject " + d + "/nvidia.json --policy enforce --binary " + hook);
  EXPECT_EQ(again.code, 0);
  EXPECT_NE(again.err.find("unchanged"), std::string::npos) << again.err;
  EXPECT_EQ(readFile(d + "/nvidia.json"), once);
  json spec = json::parse(once);
  EXPECT_EQ(spec["containerEdits"]["hooks"][0]["args"][2], "enforce");
  EXPECT_EQ(run("test -e " + d + "/bomb.yaml.kernodeck-backup").code, 1);  // nothing written for a refused file
}

// nvidia-ctk writes YAML by default: `cdi inject` reads it and writes YAML back, with the
// toolkit's hooks and every other value kept (as a third party, PyYAML, reads them), idempotent,
// with a backup; `cdi spec` writes YAML by --format or by the output's name.
TEST(HookInstall, CdiInjectEditsYamlSpecsInYaml) {
  if (!haveTool("python3") || run("python3 -c 'import yaml'").code != 0) GTEST_SKIP() << "needs python3-yaml";
  std::string d = tempDir("cdiyaml");
  std::string hook = std::string(HOOK_BIN);
  std::string original =
      "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n  hooks:\n  - args:\n    - "
      "nvidia-cdi-hook\n"
      "    - update-ldcache\n    - --folder\n    - /usr/lib/x86_64-linux-gnu\n    hookName: createContainer\n    path: "
      "/usr/bin/nvidia-cdi-hook\n"
      "  mounts:\n  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n    hostPath: "
      "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
      "    options:\n    - ro\n    - nosuid\n    - nodev\n    - bind\ndevices:\n- containerEdits:\n    deviceNodes:\n  "
      "  - path: /dev/nvidia0\n"
      "      permissions: rw\n  name: \"0\"\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: "
      "all\nkind: nvidia.com/gpu\n";
  writeFile(d + "/nvidia.yaml", original);
  json before = readYamlWithPyYaml(d + "/nvidia.yaml");
  ASSERT_TRUE(before.is_object());
  RunResult r = run(hook + " cdi inject " + d + "/nvidia.yaml --policy enforce --host-root / --binary " + hook);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(readFile(d + "/nvidia.yaml.kernodeck-backup"), original);
  std::string once = readFile(d + "/nvidia.yaml");
  EXPECT_NE(once.front(), '{') << once;  // YAML, not JSON
  json after = readYamlWithPyYaml(d + "/nvidia.yaml");
  ASSERT_TRUE(after.is_object()) << once;
  ASSERT_EQ(after["containerEdits"]["hooks"].size(), 2u) << once;
  EXPECT_EQ(after["containerEdits"]["hooks"][0], before["containerEdits"]["hooks"][0]);
  EXPECT_EQ(after["containerEdits"]["hooks"][1]["path"], hook);
  EXPECT_EQ(after["containerEdits"]["hooks"][1]["args"][2], "enforce");
  json rest = after;
  rest["containerEdits"]["hooks"] = before["containerEdits"]["hooks"];
  EXPECT_EQ(rest, before);  // nothing else changed: "0" is still a string, 0.5.0 a version
  // and it is written as the toolkit writes it: the file less our entry is the original, byte for byte.
  std::string less = once;
  size_t ours = less.find("  - hookName: createRuntime\n    path: " + hook + "\n");
  size_t end = less.find("    timeout: 5\n", ours);
  ASSERT_TRUE(ours != std::string::npos && end != std::string::npos) << once;
  less.erase(ours, end + 15 - ours);
  EXPECT_EQ(less, original);
  RunResult again = run(hook + " cdi inject " + d + "/nvidia.yaml --policy enforce --host-root / --binary " + hook);
  EXPECT_EQ(again.code, 0);
  EXPECT_NE(again.err.find("unchanged"), std::string::npos) << again.err;
  EXPECT_EQ(readFile(d + "/nvidia.yaml"), once);
  // Our own spec, in YAML.
  RunResult toStdout = run(hook + " cdi spec --format yaml --policy enforce --binary " + hook);
  ASSERT_EQ(toStdout.code, 0) << toStdout.err;
  writeFile(d + "/stdout.yaml", toStdout.out);
  json asJson = json::parse(run(hook + " cdi spec --policy enforce --binary " + hook).out, nullptr, false);
  EXPECT_EQ(readYamlWithPyYaml(d + "/stdout.yaml"), asJson);
  ASSERT_EQ(run(hook + " cdi spec --policy enforce --binary " + hook + " --output " + d + "/kernodeck.yml").code, 0);
  EXPECT_EQ(readYamlWithPyYaml(d + "/kernodeck.yml"), asJson);
}

// container/k8s/hook-cdi-daemonset.yaml's keeper, run once over a node's /etc/cdi and
// /var/run/cdi (a temporary tree for /host): the YAML and JSON NVIDIA specs get the hook, each
// in its own format; other specs and missing names are left alone.
TEST(HookInstall, CdiDaemonSetKeeperInjectsYamlAndJsonSpecs) {
  if (!haveTool("python3") || run("python3 -c 'import yaml'").code != 0) GTEST_SKIP() << "needs python3-yaml";
  std::string host = tempDir("keeperhost");
  std::string manifest = std::string(SOURCE_DIR) + "/container/k8s/hook-cdi-daemonset.yaml";
  json keeper = readYamlWithPyYaml(manifest);
  ASSERT_TRUE(keeper.is_object()) << manifest;
  keeper = keeper["spec"]["template"]["spec"]["containers"][0];
  std::string specList;
  for (const auto& e : keeper["env"])
    if (e["name"] == "KERNODECK_CDI_SPECS") specList = e["value"];
  ASSERT_FALSE(specList.empty()) << keeper.dump();
  auto local = [&](std::string s) {
    for (size_t at; (at = s.find("/host/")) != std::string::npos;) s.replace(at, 6, host + "/");
    for (size_t at; (at = s.find("/usr/local/bin/kernodeck-hook")) != std::string::npos;) s.replace(at, 29, HOOK_BIN);
    return s;
  };
  std::string script = local(keeper["args"][0].get<std::string>());
  size_t sleep = script.find("sleep 30");
  ASSERT_NE(sleep, std::string::npos) << script;
  script.replace(sleep, 8, "break");  // one round
  std::string nvidiaYaml =
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - "
      "path: /dev/nvidia0\n";
  std::string nvidiaJson =
      R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0","containerEdits":{}}]})";
  run("mkdir -p " + host + "/etc/cdi " + host + "/var/run/cdi");
  writeFile(host + "/etc/cdi/nvidia.yaml", nvidiaYaml);
  writeFile(host + "/var/run/cdi/management.nvidia.com-gpu.json", nvidiaJson);
  writeFile(host + "/etc/cdi/other-vendor.yaml", "cdiVersion: 0.5.0\nkind: example.com/x\ndevices: []\n");
  writeFile(host + "/spec-list", local(specList));
  writeFile(host + "/keeper.sh", "KERNODECK_CDI_SPECS=$(cat " + host + "/spec-list)\n" + script + "\n");
  RunResult r = run("sh " + host + "/keeper.sh");
  EXPECT_EQ(r.code, 0) << r.err;
  json yamlSpec = readYamlWithPyYaml(host + "/etc/cdi/nvidia.yaml");
  ASSERT_TRUE(yamlSpec.is_object()) << readFile(host + "/etc/cdi/nvidia.yaml");
  EXPECT_EQ(yamlSpec["containerEdits"]["hooks"][0]["path"], HOOK_BIN);
  EXPECT_EQ(yamlSpec["devices"][0]["name"], "0");
  json jsonSpec = json::parse(readFile(host + "/var/run/cdi/management.nvidia.com-gpu.json"), nullptr, false);
  EXPECT_EQ(jsonSpec["containerEdits"]["hooks"][0]["args"][2], "enforce");
  EXPECT_EQ(readFile(host + "/etc/cdi/other-vendor.yaml"), "cdiVersion: 0.5.0\nkind: example.com/x\ndevices: []\n");
  EXPECT_EQ(readFile(host + "/etc/cdi/nvidia.yaml.kernodeck-backup"), nvidiaYaml);
}

}  // namespace integration_hook_runc_test
