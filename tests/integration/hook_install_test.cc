// Installs that stay right (issue 29 §1), through the real binary: a symlinked spec edited
// through its link, the binary and the paths of the hook line checked before anything is
// written, our entry found by its marker and replaced in place, flags a command does not use
// refused, mode and owner kept, NVIDIA's original kept once, the hook's log directory made by
// the hook, and two routes (hooks.d and CDI) for one container keeping the stricter result.
// Where the mistake shows at container start, a real container is started (podman with crun and
// runc, crun and runc directly).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook_engines.h"

namespace integration_hook_install_test {

using nlohmann::json;
using namespace kdktest;
using namespace kdktest::engines;

namespace {

const char* kNvidiaJson =
    R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0"}]}}]})";

struct stat statOf(const std::string& path) {
  struct stat st {};
  ::lstat(path.c_str(), &st);
  return st;
}

}  // namespace

// A spec that configuration management left as a link is edited through it: the link stays,
// the file it points to gets the hook (and gets it again when regenerated). A link that leads
// out of the spec directories is refused and nothing is written.
TEST(HookInstall, ASymlinkedSpecIsEditedThroughItsLink) {
  std::string d = tempDir("cdilink"), elsewhere = tempDir("cdielsewhere");
  std::string bin = " --binary " + kHook;
  writeFile(d + "/nvidia-550.json", kNvidiaJson);
  ASSERT_EQ(run("ln -s nvidia-550.json " + d + "/nvidia.json").code, 0);
  RunResult r = run(kHook + " cdi inject " + d + "/nvidia.json --policy enforce" + bin);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(S_ISLNK(statOf(d + "/nvidia.json").st_mode)) << "the link was replaced by a copy";
  json target = json::parse(readFile(d + "/nvidia-550.json"), nullptr, false);
  ASSERT_TRUE(target.is_object());
  EXPECT_EQ(target["containerEdits"]["hooks"][0]["args"][2], "enforce");
  // The toolkit regenerates the target for a new driver: the next inject puts the hook back.
  writeFile(d + "/nvidia-550.json", kNvidiaJson);
  RunResult again = run(kHook + " cdi inject " + d + "/nvidia.json --policy enforce" + bin);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("unchanged"), std::string::npos) << again.err;
  EXPECT_EQ(json::parse(readFile(d + "/nvidia-550.json"))["containerEdits"]["hooks"].size(), 1u);
  // Out of the spec directories: refused, one line, the target untouched.
  writeFile(elsewhere + "/other.json", kNvidiaJson);
  ASSERT_EQ(run("ln -s " + elsewhere + "/other.json " + d + "/out.json").code, 0);
  RunResult out = run(kHook + " cdi inject " + d + "/out.json --policy enforce" + bin);
  EXPECT_EQ(out.code, 2) << out.err;
  EXPECT_NE(out.err.find("outside the spec directories"), std::string::npos) << out.err;
  EXPECT_EQ(readFile(elsewhere + "/other.json"), kNvidiaJson);
  EXPECT_TRUE(S_ISLNK(statOf(d + "/out.json").st_mode));
}

// What the hook line names is checked before anything is written: a binary that is missing, not
// executable or not kernodeck-hook, a host root that does not exist, a log whose directory tree
// does not exist. Flags the command does not use are usage errors.
TEST(HookInstall, WhatTheLineNamesIsCheckedAndUnusedFlagsRefused) {
  std::string d = tempDir("cdicheck");
  writeFile(d + "/nvidia.json", kNvidiaJson);
  writeFile(d + "/config.json", R"({"ociVersion":"1.0.2"})");
  std::string spec = kHook + " cdi inject " + d + "/nvidia.json --policy enforce ";
  struct Case {
    std::string args;
    const char* says;
  } cases[] = {
      {spec + "--binary " + kHook + "k", "does not exist"},
      {spec + "--binary " + d + "/config.json", "is not an executable file"},
      {spec + "--binary /bin/true", "does not answer --version as kernodeck-hook does"},
      {spec + "--binary " + kHook + " --host-root /nonexistent/kdk-host", "--host-root /nonexistent/kdk-host is not"},
      {spec + "--binary " + kHook + " --log /nonexistent/kdk/hook.log", "--log /nonexistent/kdk/hook.log"},
      {spec + "--binary " + kHook + " --output " + d + "/copy.json", "--output is a flag of cdi spec and hooks-d"},
      {spec + "--binary " + kHook + " --kind example.com/x", "--kind is a flag of cdi spec only"},
      {kHook + " runc-config " + d + "/config.json --binary " + kHook + " --device foo",
       "--device is a flag of cdi spec only"},
      {kHook + " runc-config " + d + "/config.json --binary " + kHook + " --output -", "--output is a flag of"},
  };
  for (const auto& c : cases) {
    RunResult r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_EQ(readFile(d + "/nvidia.json"), kNvidiaJson) << "written despite a refused line";
  EXPECT_EQ(readFile(d + "/config.json"), R"({"ociVersion":"1.0.2"})");
  EXPECT_EQ(run("test -e " + d + "/copy.json").code, 1);
  // A log directory that does not exist yet, in one that does: the hook makes it.
  RunResult ok = run(spec + "--binary " + kHook + " --log " + d + "/logs/hook.log");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// Our entry is found by its marker (argv[0] kernodeck-hook), not by its path: a broken entry an
// earlier install left (a mistyped --binary) is replaced in place, not kept beside a second one.
// Mode and owner of the spec are kept, the previous version kept, and NVIDIA's original kept once.
TEST(HookInstall, OurEntryIsReplacedInPlaceAndTheOriginalKept) {
  std::string d = tempDir("cdimarker");
  json spec = json::parse(kNvidiaJson);
  spec["containerEdits"]["hooks"] = {
      {{"hookName", "createContainer"}, {"path", "/usr/bin/nvidia-cdi-hook"}, {"args", {"nvidia-cdi-hook", "a"}}},
      {{"hookName", "createRuntime"},
       {"path", "/usr/local/bin/kernodeck-hookk"},
       {"args", {"kernodeck-hook", "--policy", "enforce", "createRuntime"}}},
      {{"hookName", "createContainer"}, {"path", "/usr/bin/nvidia-cdi-hook"}, {"args", {"nvidia-cdi-hook", "b"}}}};
  std::string file = d + "/nvidia.json";
  writeFile(file, spec.dump());
  RunResult r = run(kHook + " cdi inject " + file + " --policy warn --binary " + kHook);
  ASSERT_EQ(r.code, 0) << r.err;
  json hooks = json::parse(readFile(file))["containerEdits"]["hooks"];
  ASSERT_EQ(hooks.size(), 3u) << hooks.dump();
  EXPECT_EQ(hooks[0]["args"][1], "a");
  EXPECT_EQ(hooks[1]["path"], kHook);
  EXPECT_EQ(hooks[2]["args"][1], "b");

  // NVIDIA's original once, the previous version each time, with the spec's mode and owner.
  std::string nv = d + "/nv.json";
  writeFile(nv, kNvidiaJson);
  bool root = ::geteuid() == 0;
  run("chmod 0600 " + nv + (root ? " && chown 65534:65534 " + nv : ""));
  ASSERT_EQ(run(kHook + " cdi inject " + nv + " --policy enforce --binary " + kHook).code, 0);
  std::string enforced = readFile(nv);
  ASSERT_EQ(run(kHook + " cdi inject " + nv + " --policy warn --binary " + kHook).code, 0);
  EXPECT_EQ(readFile(nv + ".orig"), kNvidiaJson);
  EXPECT_EQ(readFile(nv + ".kernodeck-backup"), enforced);
  for (const std::string& f : {nv, nv + ".orig", nv + ".kernodeck-backup"}) {
    struct stat st = statOf(f);
    EXPECT_EQ(st.st_mode & 07777, 0600u) << f;
    if (root) {
      EXPECT_EQ(st.st_uid, 65534u) << f;
    }
  }
}

namespace {

// The state a runtime hands the hook, for a bundle with an empty root.
std::string plainState(const std::string& dir, const std::string& id) {
  run("mkdir -p " + dir + "/rootfs/etc/kernodeck");
  writeFile(
      dir + "/config.json",
      json({{"ociVersion", "1.0.2"}, {"root", {{"path", "rootfs"}}}, {"process", {{"args", {"/bin/sh"}}}}}).dump());
  writeFile(dir + "/state.json",
            json({{"ociVersion", "1.0.2"}, {"id", id}, {"status", "creating"}, {"pid", 0}, {"bundle", dir}}).dump());
  return dir + "/state.json";
}

}  // namespace

// The hook makes its log directory (0750) when it is missing, and says in the record why not
// when it cannot.
TEST(HookLog, TheHookMakesItsLogDirectoryOrSaysWhyNot) {
  std::string d = tempDir("hooklogdir");
  std::string state = plainState(d, "log1");
  std::string host = std::string(SOURCE_DIR) + "/tests/fixtures/hosts/cpu-only";
  RunResult r = run(kHook + " --policy warn --host-root " + host + " --log " + d + "/logs/hook.log < " + state);
  EXPECT_EQ(r.code, 0) << r.err;
  json line = json::parse(readFile(d + "/logs/hook.log"), nullptr, false);
  ASSERT_TRUE(line.is_object()) << "no log line";
  EXPECT_EQ(line["container"], "log1");
  EXPECT_EQ(statOf(d + "/logs").st_mode & 07777, 0750u);
  RunResult lost =
      run(kHook + " --policy warn --host-root " + host + " --log " + d + "/no/such/tree/hook.log < " + state);
  EXPECT_EQ(lost.code, 0);
  EXPECT_NE(lost.err.find("cannot create the log directory"), std::string::npos) << lost.err;
  json rec = json::parse(readFile(d + "/rootfs/run/kernodeck/host.json"), nullptr, false);
  ASSERT_TRUE(rec.is_object());
  EXPECT_NE(rec["log_error"].get<std::string>().find(d + "/no/such/tree"), std::string::npos) << rec.dump();
}

// podman with crun shows a refused user only crun's generic line; the reason is in the hook's log.
// A log directory that did not exist at install is made by the hook, so the reason is there.
TEST(HookLog, PodmanCrunRefusalIsLoggedInANewLogDirectory) {
  if (::geteuid() != 0 || !haveTool("podman") || !haveTool("crun") || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, podman, crun";
  if (!crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  CdiSpec spec = fakeNvidiaSpec(host);
  std::string log = tempDir("newlogdir") + "/kernodeck/hook.log";
  RunResult inj = run(kHook + " cdi inject " + spec.file + " --binary " + kHook + " --policy enforce --host-root " +
                      host + " --log " + log);
  ASSERT_EQ(inj.code, 0) << inj.err;
  RunResult r =
      run("CONTAINERS_CONF=" + containersConf() + " timeout 120 podman --runtime crun run --rm --network none" +
          " --device " + spec.kind + "=0 -e NVIDIA_VISIBLE_DEVICES=0 -e 'NVIDIA_REQUIRE_CUDA=cuda>=12.9'" +
          " --rootfs " + busyboxRootfs() + " /bin/sh -c 'cat /run/kernodeck/host.json'");
  EXPECT_NE(r.code, 0) << r.out;
  json line = json::parse(lastLine(log), nullptr, false);
  ASSERT_TRUE(line.is_object()) << "the refusal's reason is nowhere: no log at " << log;
  EXPECT_EQ(line["decision"], "block");
  EXPECT_NE(line["reason"].get<std::string>().find("hook.require.unsatisfied"), std::string::npos);
}

namespace {

// A GPU container through podman and RUNTIME with NVIDIA's spec holding the broken entry an old
// install left (a mistyped --binary): after one inject with the right binary it starts.
void brokenEntryReplaced(const std::string& runtime) {
  if (::geteuid() != 0 || !haveTool("podman") || !haveTool(runtime) || !haveTool("busybox"))
    GTEST_SKIP() << "needs root, podman, " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  CdiSpec spec = fakeNvidiaSpec(host);
  std::string log = tempDir("brokenentry") + "/hook.log";
  json s = readSpec(spec.file);
  s["containerEdits"]["hooks"] = {{{"hookName", "createRuntime"},
                                   {"path", kHook + "k"},
                                   {"args", {"kernodeck-hook", "--policy", "warn", "createRuntime"}}}};
  writeFile(spec.file, s.dump(2));
  RunResult inj = run(kHook + " cdi inject " + spec.file + " --binary " + kHook + " --policy warn --host-root " + host +
                      " --log " + log);
  ASSERT_EQ(inj.code, 0) << inj.err;
  EXPECT_EQ(readSpec(spec.file)["containerEdits"]["hooks"].size(), 1u) << readFile(spec.file);
  RunResult r = run("CONTAINERS_CONF=" + containersConf() + " timeout 120 podman --runtime " + runtime +
                    " run --rm --network none --device " + spec.kind +
                    "=0 -e NVIDIA_VISIBLE_DEVICES=0 -e 'NVIDIA_REQUIRE_CUDA=cuda>=12.1' --rootfs " + busyboxRootfs() +
                    " /bin/sh -c 'cat /run/kernodeck/host.json'");
  ASSERT_EQ(r.code, 0) << runtime << ": the GPU container does not start\n" << r.err;
  EXPECT_NE(r.out.find("\"decision\": \"allow\""), std::string::npos) << r.out;
}

// Two entries for one container (a hooks.d file and a CDI entry): the first warns about a
// container that cannot run, the second, pointed at a host where it can, would allow it. The
// record keeps the stricter result.
void twoRoutes(const std::string& runtime, const json& extra) {
  if (::geteuid() != 0 || !haveTool(runtime) || !haveTool("busybox")) GTEST_SKIP() << "needs root and " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string old = hostTree("driver-470"), good = hostTree("h100-550-open");
  ASSERT_FALSE(old.empty() || good.empty());
  std::string log = tempDir("tworoutes") + "/hook.log";
  std::string b = bundleWithHook(runtime, "warn", old, log, "cuda>=12.1", extra);
  json cfg = json::parse(readFile(b + "/config.json"));
  json second = cfg["hooks"]["createRuntime"][1];
  for (auto& a : second["args"])
    if (a == old) a = good;
  cfg["hooks"]["createRuntime"].push_back(second);
  writeFile(b + "/config.json", cfg.dump(1));
  std::string id = "kdk-routes-" + std::to_string(::getpid()) + "-" + runtime;
  RunResult r = run("cd / && timeout 60 " + runtime + " run --bundle " + b + " " + id + " < /dev/null");
  run(runtime + " delete -f " + id + " >/dev/null 2>&1");
  ASSERT_EQ(r.code, 0) << r.err;
  size_t brace = r.out.find('{');
  json rec = json::parse(brace == std::string::npos ? std::string() : r.out.substr(brace), nullptr, false);
  ASSERT_TRUE(rec.is_object()) << r.out;
  EXPECT_EQ(rec["decision"], "warn") << "the looser second run's record replaced the first's\n" << r.out;
  json line = json::parse(lastLine(log), nullptr, false);
  ASSERT_TRUE(line.is_object());
  EXPECT_EQ(line["earlier_run"]["decision"], "warn") << line.dump();
}

}  // namespace

TEST(HookInstall, PodmanRuncStartsAfterABrokenEntryIsReplaced) { brokenEntryReplaced("runc"); }
TEST(HookInstall, PodmanCrunStartsAfterABrokenEntryIsReplaced) { brokenEntryReplaced("crun"); }

TEST(HookRoutes, TwoEntriesKeepTheStricterRecordUnderRunc) { twoRoutes("runc", json::object()); }
TEST(HookRoutes, TwoEntriesKeepTheStricterRecordUnderCrun) {
  twoRoutes("crun", {{"annotations", {{"run.oci.hooks.stderr", "/dev/stderr"}}}});
}

}  // namespace integration_hook_install_test
