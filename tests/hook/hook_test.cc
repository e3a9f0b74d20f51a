#include "kernodeck/hook/hook.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "../host/fixture.h"

using namespace kernodeck;
using nlohmann::json;

namespace {

std::string tmpdir() {
  char t[] = "/tmp/kdk-hook-XXXXXX";
  return mkdtemp(t);
}

// A bundle with an empty rootfs and a config asking for `env` and `devices`.
std::string bundle(const json& env, const json& devices, const json& annotations = json::object()) {
  std::string b = tmpdir();
  ::mkdir((b + "/rootfs").c_str(), 0755);
  json cfg = {{"ociVersion", "1.0.2"},
              {"root", {{"path", "rootfs"}}},
              {"process", {{"env", env}, {"args", {"/bin/sh"}}}},
              {"linux", {{"devices", devices}}},
              {"annotations", annotations}};
  std::ofstream(b + "/config.json") << cfg.dump();
  return b;
}

std::string state(const std::string& b) {
  return json({{"ociVersion", "1.0.2"}, {"id", "c1"}, {"status", "creating"}, {"pid", 0}, {"bundle", b}}).dump();
}

hook::Options opts(hook::Policy p, const std::string& root = "/nonexistent") {
  hook::Options o;
  o.policy = p;
  o.hostRoot = root;
  return o;
}

}  // namespace

TEST(Hook, BadInputWarnStartsEnforceRefuses) {
  std::string b = tmpdir();
  std::ofstream(b + "/config.json") << "{{ garbage";
  struct Case { std::string stdinText, expect; } cases[] = {
      {"", "empty"},
      {"\x01\x02 not json", "not a JSON object"},
      {R"({"id":"x"})", "no bundle"},
      {R"({"id":"x","bundle":"/nonexistent/bundle"})", "/nonexistent/bundle/config.json"},
      {R"({"id":"x","bundle":")" + b + R"("})", "config.json is not a JSON object"},
  };
  for (const auto& c : cases) {
    hook::Outcome w = hook::run(opts(hook::Policy::Warn), c.stdinText);
    EXPECT_EQ(w.exitCode, 0) << c.expect;
    hook::Outcome e = hook::run(opts(hook::Policy::Enforce), c.stdinText);
    EXPECT_EQ(e.exitCode, 1) << c.expect;
    EXPECT_NE(e.message.find(c.expect), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos);
  }
}

TEST(Hook, WritesTheHostRecordAndLogs) {
  std::string b = bundle({"PATH=/bin"}, json::array());
  hook::Options o = opts(hook::Policy::Enforce);
  o.logFile = b + "/hook.log";
  hook::Outcome out = hook::run(o, state(b));
  EXPECT_EQ(out.exitCode, 0);
  std::ifstream rec(b + "/rootfs/run/kernodeck/host.json");
  ASSERT_TRUE(rec.good());
  json r = json::parse(rec);
  EXPECT_EQ(r["schema"], "kernodeck.host/v1");
  EXPECT_EQ(r["decision"], "allow");
  EXPECT_FALSE(r["gpu_container"].get<bool>());
  std::ifstream log(o.logFile);
  std::string line;
  std::getline(log, line);
  json l = json::parse(line);
  EXPECT_EQ(l["container"], "c1");
  EXPECT_EQ(l["decision"], "allow");
  EXPECT_TRUE(l.contains("duration_us"));
}

TEST(Hook, ContainerMayTightenButNotLoosen) {
  json gpuEnv = {"NVIDIA_VISIBLE_DEVICES=all"};
  std::string b1 = bundle(gpuEnv, json::array(), {{"io.kernodeck.policy", "enforce"}});
  EXPECT_EQ(hook::run(opts(hook::Policy::Warn), state(b1)).exitCode, 1);  // no driver on the fake root: refused
  std::string b2 = bundle(gpuEnv, json::array(), {{"io.kernodeck.policy", "warn"}});
  EXPECT_EQ(hook::run(opts(hook::Policy::Enforce), state(b2)).exitCode, 1);
  std::string b3 = bundle(gpuEnv, json::array());
  EXPECT_EQ(hook::run(opts(hook::Policy::Warn), state(b3)).exitCode, 0);
}

TEST(Hook, ReadsTheExpectationFromTheRootfs) {
  if (!kdktest::isRoot()) GTEST_SKIP() << "fake /dev trees need mknod (root)";
  std::string host = kdktest::hostFixture("driver-470");
  json devices = {{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                  {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", 509}, {"minor", 0}},
                  {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}};
  std::string b = bundle({"NVIDIA_VISIBLE_DEVICES=0"}, devices);
  EXPECT_EQ(hook::run(opts(hook::Policy::Enforce, host), state(b)).exitCode, 0);
  ::mkdir((b + "/rootfs/etc").c_str(), 0755);
  ::mkdir((b + "/rootfs/etc/kernodeck").c_str(), 0755);
  std::ofstream(b + "/rootfs/etc/kernodeck/expect.json")
      << R"({"schema":"kernodeck.expect/v1","accelerator":"cuda","torch":{"version":"2.3.0+cu121","cuda":"12.1"}})";
  hook::Outcome out = hook::run(opts(hook::Policy::Enforce, host), state(b));
  EXPECT_EQ(out.exitCode, 1);
  EXPECT_NE(out.message.find("hook.cuda.unsupported"), std::string::npos) << out.message;
}

TEST(Hook, NeverWritesThroughAPlantedSymlink) {
  std::string outside = tmpdir();
  std::string b = bundle({"PATH=/bin"}, json::array());
  ASSERT_EQ(::symlink(outside.c_str(), (b + "/rootfs/run").c_str()), 0);
  hook::Outcome out = hook::run(opts(hook::Policy::Warn), state(b));
  EXPECT_EQ(out.exitCode, 0);
  struct stat st {};
  EXPECT_NE(::stat((outside + "/kernodeck/host.json").c_str(), &st), 0);
  EXPECT_NE(::stat((outside + "/kernodeck").c_str(), &st), 0);
}
