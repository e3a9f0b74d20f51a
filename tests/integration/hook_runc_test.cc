// kernodeck-hook under real runc: a busybox bundle started with the hook as a
// createRuntime hook, against each fake host tree, in warn and enforce mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

#include "support.h"

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

Bundle makeBundle(const std::string& policy, const std::string& hostRoot, const json& env, const json& devices) {
  Bundle b;
  b.dir = tempDir("bundle");
  b.log = b.dir + "/hook.log";
  run("mkdir -p " + b.dir + "/rootfs/bin && cp \"$(command -v busybox)\" " + b.dir + "/rootfs/bin/busybox && ln -s busybox " +
      b.dir + "/rootfs/bin/sh && ln -s busybox " + b.dir + "/rootfs/bin/cat");
  run("cd " + b.dir + " && runc spec");
  json cfg = json::parse(readFile(b.dir + "/config.json"));
  cfg["process"]["terminal"] = false;
  cfg["process"]["args"] = {"/bin/sh", "-c", "cat /run/kernodeck/host.json"};
  for (const auto& e : env) cfg["process"]["env"].push_back(e);
  cfg["root"]["readonly"] = false;
  cfg["linux"]["devices"] = devices;
  cfg["hooks"] = {{"createRuntime", {{{"path", HOOK_BIN},
                                      {"args", {"kernodeck-hook", "--policy", policy, "--host-root", hostRoot, "--log", b.log, "createRuntime"}},
                                      {"timeout", 10}}}}};
  writeFile(b.dir + "/config.json", cfg.dump(1));
  return b;
}

json nvDevices(int gpus, int uvmMajor) {
  json d = json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                        {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", uvmMajor}, {"minor", 0}}});
  for (int i = 0; i < gpus; ++i) d.push_back({{"path", "/dev/nvidia" + std::to_string(i)}, {"type", "c"}, {"major", 195}, {"minor", i}});
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
      {"h100 good", "h100-550-open", {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.1"}, nvDevices(2, 508), true, ""},
      {"470 vs cuda>=12.4", "driver-470", {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"}, nvDevices(1, 509), false,
       "hook.require.unsatisfied"},
      {"470 with an old cuda", "driver-470", {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=11.0"}, nvDevices(1, 509), true, ""},
      {"missing nvidia-uvm", "no-uvm", {"NVIDIA_VISIBLE_DEVICES=0"},
       json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                    {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}}),
       false, "nvidia-uvm"},
      {"a100 mig", "a100-mig", {"NVIDIA_VISIBLE_DEVICES=0:1"},
       [] { json d = nvDevices(1, 508); d.push_back({{"path", "/dev/nvidia-caps/nvidia-cap12"}, {"type", "c"}, {"major", 511}, {"minor", 12}}); return d; }(),
       true, ""},
      {"mi300", "mi300", {}, json::array({{{"path", "/dev/kfd"}, {"type", "c"}, {"major", 236}, {"minor", 0}},
                                          {{"path", "/dev/dri/renderD128"}, {"type", "c"}, {"major", 226}, {"minor", 128}}}),
       true, ""},
      {"cpu-only, cpu container", "cpu-only", {"PATH=/bin"}, json::array(), true, ""},
      {"cpu-only, gpu container", "cpu-only", {"NVIDIA_VISIBLE_DEVICES=all"}, json::array(), false, "hook.driver.absent"},
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
