#include "kernodeck/hook/hook.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sys/types.h>

#include <fstream>
#include <functional>

#include "../host/fixture.h"

namespace hook_hook_test {

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

// The cpu-only fake host needs no device nodes, so these tests run without root.
const std::string kCpuHost = std::string(SOURCE_DIR) + "/tests/fixtures/hosts/cpu-only";

hook::Options opts(hook::Policy p, const std::string& root = kCpuHost) {
  hook::Options o;
  o.policy = p;
  o.hostRoot = root;
  return o;
}

}  // namespace

TEST(Hook, BadInputWarnStartsEnforceRefuses) {
  std::string b = tmpdir();
  std::ofstream(b + "/config.json") << "{{ garbage";
  struct Case {
    std::string stdinText, expect;
  } cases[] = {
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
  auto fs = host::fixtureHostFs(kdktest::fixtureDir("driver-470"));
  ASSERT_TRUE(fs.ok());
  auto opts = [&](hook::Policy p, const std::string&) {
    hook::Options o;
    o.policy = p;
    o.hostFs = fs->get();
    return o;
  };
  std::string host;
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

namespace {

json readJsonFile(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

json lastLogLine(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  return json::parse(last, nullptr, false);
}

}  // namespace

// An expectation that is there but cannot be used is an error finding: enforce refuses, warn
// starts; both put it in the record (warn only: enforce writes none) and the log.
TEST(Hook, AnUnusableExpectationIsAnErrorNotIgnored) {
  struct Case {
    const char* name;
    std::function<void(const std::string& etc)> make;
    const char* says;
  };
  std::vector<Case> cases = {
      {"truncated",
       [](const std::string& e) {
         std::ofstream(e + "/expect.json") << R"({"schema":"kernodeck.expect/v1","torch":{)";
       },
       "not valid JSON"},
      {"array", [](const std::string& e) { std::ofstream(e + "/expect.json") << "[1,2]"; },
       "is a JSON array, not an object"},
      {"schema",
       [](const std::string& e) { std::ofstream(e + "/expect.json") << R"({"schema":"kernodeck.expect/v9"})"; },
       "not kernodeck.expect/v1"},
      {"field type",
       [](const std::string& e) {
         std::ofstream(e + "/expect.json") << R"({"schema":"kernodeck.expect/v1","torch":{"cuda":12.1}})";
       },
       "'torch.cuda' is number, not a string"},
      {"list entry",
       [](const std::string& e) {
         std::ofstream(e + "/expect.json") << R"({"schema":"kernodeck.expect/v1","nvidia":{"require":[null]}})";
       },
       "'nvidia.require[0]' is null"},
      {"fifo", [](const std::string& e) { ASSERT_EQ(::mkfifo((e + "/expect.json").c_str(), 0644), 0); },
       "is a FIFO, not a regular file"},
      {"directory", [](const std::string& e) { ASSERT_EQ(::mkdir((e + "/expect.json").c_str(), 0755), 0); },
       "is a directory"},
      {"too large",
       [](const std::string& e) {
         std::ofstream(e + "/expect.json")
             << R"({"schema":"kernodeck.expect/v1","x":")" << std::string(hook::kMaxExpectationBytes, 'a') << "\"}";
       },
       "over the 1.0 MiB limit"},
      {"link loop", [](const std::string& e) { ASSERT_EQ(::symlink("expect.json", (e + "/expect.json").c_str()), 0); },
       "symbolic links"},
  };
  for (const auto& c : cases) {
    std::string b = bundle({"PATH=/bin"}, json::array());
    std::string etc = b + "/rootfs/etc/kernodeck";
    ::mkdir((b + "/rootfs/etc").c_str(), 0755);
    ::mkdir(etc.c_str(), 0755);
    c.make(etc);
    for (hook::Policy p : {hook::Policy::Warn, hook::Policy::Enforce}) {
      bool enforce = p == hook::Policy::Enforce;
      std::string where = std::string(c.name) + (enforce ? " [enforce]" : " [warn]");
      hook::Options o = opts(p);
      o.logFile = b + "/hook.log";
      ::unlink((b + "/rootfs/run/kernodeck/host.json").c_str());
      hook::Outcome out = hook::run(o, state(b));
      EXPECT_EQ(out.exitCode, enforce ? 1 : 0) << where;
      EXPECT_NE(out.message.find("hook.expectation.invalid"), std::string::npos) << where << ": " << out.message;
      EXPECT_NE(out.message.find(c.says), std::string::npos) << where << ": " << out.message;
      json log = lastLogLine(o.logFile);
      ASSERT_TRUE(log.is_object()) << where;
      EXPECT_EQ(log["decision"], enforce ? "block" : "warn") << where;
      ASSERT_FALSE(log["verdicts"].empty()) << where;
      EXPECT_EQ(log["verdicts"][0]["code"], "hook.expectation.invalid") << where;
      json rec = readJsonFile(b + "/rootfs/run/kernodeck/host.json");
      if (enforce) {
        EXPECT_TRUE(rec.is_discarded()) << where << ": a refused container gets no record";
      } else {
        ASSERT_TRUE(rec.is_object()) << where;
        EXPECT_EQ(rec["decision"], "warn") << where;
        EXPECT_TRUE(rec["expectation"].is_null()) << where;
        EXPECT_EQ(rec["verdicts"][0]["code"], "hook.expectation.invalid") << where;
      }
    }
  }
}

TEST(Hook, AnAbsentExpectationIsFineUnlessAnAnnotationNamesIt) {
  std::string b = bundle({"PATH=/bin"}, json::array());
  EXPECT_EQ(hook::run(opts(hook::Policy::Enforce), state(b)).exitCode, 0);
  std::string named = bundle({"PATH=/bin"}, json::array(), {{"io.kernodeck.expect", "/opt/expect.json"}});
  hook::Outcome out = hook::run(opts(hook::Policy::Enforce), state(named));
  EXPECT_EQ(out.exitCode, 1);
  EXPECT_NE(out.message.find("/opt/expect.json, named by the annotation io.kernodeck.expect, does not exist"),
            std::string::npos)
      << out.message;
}

TEST(Hook, AnUnreadableHostRootIsItsOwnFindingNotAMissingDriver) {
  std::string file = tmpdir() + "/file";
  std::ofstream(file) << "x";
  struct Case {
    std::string root, says;
  } cases[] = {
      {"/nonexistent/host", "host root /nonexistent/host is unreadable: No such file or directory"},
      {file, "is unreadable: not a directory"},
      {tmpdir(), "has no readable proc/ directory"},
  };
  for (const auto& c : cases)
    for (const char* env : {"NVIDIA_VISIBLE_DEVICES=all", "PATH=/bin"}) {
      std::string b = bundle({env}, json::array());
      hook::Outcome e = hook::run(opts(hook::Policy::Enforce, c.root), state(b));
      EXPECT_EQ(e.exitCode, 1) << c.root;
      EXPECT_NE(e.message.find("hook.hostroot.unreadable"), std::string::npos) << e.message;
      EXPECT_NE(e.message.find(c.says), std::string::npos) << e.message;
      EXPECT_EQ(e.message.find("driver"), std::string::npos) << e.message;
      hook::Outcome w = hook::run(opts(hook::Policy::Warn, c.root), state(b));
      EXPECT_EQ(w.exitCode, 0);
      json rec = readJsonFile(b + "/rootfs/run/kernodeck/host.json");
      ASSERT_TRUE(rec.is_object());
      ASSERT_EQ(rec["verdicts"].size(), 1u) << rec["verdicts"].dump();
      EXPECT_EQ(rec["verdicts"][0]["code"], "hook.hostroot.unreadable");
    }
}

TEST(Hook, AUsageErrorRefusesUnderEnforceAndStartsUnderWarnLoggedBoth) {
  std::string b = bundle({"PATH=/bin"}, json::array());
  for (hook::Policy p : {hook::Policy::Warn, hook::Policy::Enforce}) {
    hook::Options o = opts(p);
    o.logFile = b + "/hook.log";
    o.usageError = "unknown option '--host_root'";
    hook::Outcome out = hook::run(o, state(b));
    EXPECT_EQ(out.exitCode, p == hook::Policy::Enforce ? 2 : 0);  // 2: a usage error
    EXPECT_EQ(out.message, std::string("kernodeck-hook: ") + (p == hook::Policy::Enforce ? "refused" : "warning") +
                               ": command line: unknown option '--host_root'");
    json log = lastLogLine(o.logFile);
    EXPECT_EQ(log["container"], "c1");
    EXPECT_EQ(log["decision"], p == hook::Policy::Enforce ? "block" : "warn");
    EXPECT_NE(log["reason"].get<std::string>().find("--host_root"), std::string::npos);
  }
}

// A second run for the same container (two routes installed) reads only container.id,
// container.pid, policy and decision of the first run's record (without building its document):
// an earlier enforce applies again; a record of another container, another process or fields of
// another type does not count.
TEST(Hook, AnEarlierRecordOfTheSameContainerKeepsTheStricterPolicy) {
  json gpuEnv = {"NVIDIA_VISIBLE_DEVICES=all"};  // refused under enforce: no driver on the fake root
  struct Case {
    json record;
    int exitCode;
  } cases[] = {
      {{{"container", {{"id", "c1"}, {"pid", 0}}}, {"policy", "enforce"}, {"decision", "block"}}, 1},
      {{{"verdicts", {{{"policy", "warn"}}}},
        {"container", {{"pid", 0}, {"id", "c1"}}},
        {"policy", "enforce"},
        {"decision", "warn"}},
       1},
      {{{"container", {{"id", "c2"}, {"pid", 0}}}, {"policy", "enforce"}, {"decision", "block"}}, 0},
      {{{"container", {{"id", "c1"}, {"pid", 7}}}, {"policy", "enforce"}, {"decision", "block"}}, 0},
      {{{"container", {{"id", "c1"}, {"pid", 0}}}, {"policy", {{"is", "enforce"}}}, {"decision", "block"}}, 0},
      {{{"container", {{"id", {"c1"}}, {"pid", 0}}}, {"policy", "enforce"}, {"decision", "block"}}, 0},
      {json::array({"enforce"}), 0},
  };
  for (const auto& c : cases) {
    std::string b = bundle(gpuEnv, json::array());
    ::mkdir((b + "/rootfs/run").c_str(), 0755);
    ::mkdir((b + "/rootfs/run/kernodeck").c_str(), 0755);
    std::ofstream(b + "/rootfs/run/kernodeck/host.json") << c.record.dump();
    EXPECT_EQ(hook::run(opts(hook::Policy::Warn), state(b)).exitCode, c.exitCode) << c.record.dump();
  }
}

// The bytes of the host record the hook writes (time, version and the bundle's temporary path
// aside) are those of the recorded golden: host::HostRecord::toJson must not change what the
// probe and `reference init --host-record` read. KERNODECK_UPDATE_GOLDEN=1 rewrites the golden.
TEST(Hook, TheHostRecordsBytesMatchTheGolden) {
  auto fs = host::fixtureHostFs(kdktest::fixtureDir("h100-550-open"));
  ASSERT_TRUE(fs.ok());
  hook::Options o;
  o.policy = hook::Policy::Warn;  // warn: a record is written whatever the verdicts
  o.hostFs = fs->get();
  json devices = {{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                  {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", 508}, {"minor", 0}},
                  {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}};
  // The image asks for a newer CUDA than the driver runs: a verdict with evidence, decided "warn".
  std::string b = bundle({"NVIDIA_VISIBLE_DEVICES=0,7", "NVIDIA_REQUIRE_CUDA=cuda>=12.6"}, devices);
  ::mkdir((b + "/rootfs/etc").c_str(), 0755);
  ::mkdir((b + "/rootfs/etc/kernodeck").c_str(), 0755);
  std::ofstream(b + "/rootfs/etc/kernodeck/expect.json")
      << R"({"schema":"kernodeck.expect/v1","accelerator":"cuda","image":{"digest":"sha256:)" << std::string(64, 'a')
      << R"("},"torch":{"version":"2.3.0+cu121","cuda":"12.1","arch_list":["sm_80","sm_90"]},)"
      << R"("cuda":{"runtime":"12.1.105","compat_driver_branches":[]},"nvidia":{"require":["cuda>=12.1"]}})";
  hook::Outcome out = hook::run(o, state(b));
  EXPECT_EQ(out.exitCode, 0) << out.message;
  std::ifstream in(b + "/rootfs/run/kernodeck/host.json");
  ASSERT_TRUE(in.good());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()))
      bytes.replace(at, from.size(), to);
  };
  json rec = json::parse(bytes);
  replace("\"" + rec["time"].get<std::string>() + "\"", "\"TIME\"");
  replace("\"" + rec["kernodeck_version"].get<std::string>() + "\"", "\"VERSION\"");
  replace("\"" + b + "\"", "\"BUNDLE\"");
  replace(std::string(SOURCE_DIR), "SOURCE_DIR");
  std::string golden = std::string(SOURCE_DIR) + "/tests/fixtures/golden/host-record-h100-550-open.json";
  if (std::getenv("KERNODECK_UPDATE_GOLDEN")) std::ofstream(golden) << bytes;
  std::ifstream g(golden);
  ASSERT_TRUE(g.good()) << golden << " is missing: run with KERNODECK_UPDATE_GOLDEN=1";
  std::string want((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, want);
}

}  // namespace hook_hook_test
