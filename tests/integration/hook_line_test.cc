// Mistakes in the hook's own line, under real runtimes (issue 25 §5): an argument that is not a
// runtime-hook argument (--help, --version, a word that is not a stage) refuses under enforce,
// like every other mistake, with the reason logged; `--version` alone still answers a person.
#include <gtest/gtest.h>
#include <unistd.h>

#include "hook_engines.h"

namespace integration_hook_line_test {

using nlohmann::json;
using namespace kdktest;
using namespace kdktest::engines;

namespace {

// `kernodeck-hook --policy enforce ... EXTRA createRuntime` as RUNTIME's createRuntime hook, for
// a container that the host can run: only the line can refuse it.
void lineRefuses(const std::string& runtime, const json& extraConfig) {
  if (::geteuid() != 0 || !haveTool(runtime) || !haveTool("busybox")) GTEST_SKIP() << "needs root and " << runtime;
  if (runtime == "crun" && !crunReady()) GTEST_SKIP() << "crun needs the hugetlb cgroup as v1";
  std::string host = hostTree("h100-550-open");
  ASSERT_FALSE(host.empty());
  int n = 0;
  const std::pair<const char*, const char*> extras[] = {{"--version", "'--version' is not a runtime-hook argument"},
                                                        {"--help", "'--help' is not a runtime-hook argument"},
                                                        {"-h", "'--help' is not a runtime-hook argument"},
                                                        {"check", "one stage argument expected, got 2"}};
  for (const auto& [extra, says] : extras) {
    std::string where = runtime + " with " + std::string(extra), log = tempDir("linelog") + "/hook.log";
    std::string b = bundleWithHook(runtime, "enforce", host, log, "cuda>=12.1", extraConfig);
    json cfg = json::parse(readFile(b + "/config.json"));
    json& args = cfg["hooks"]["createRuntime"][1]["args"];
    ASSERT_EQ(args.back(), "createRuntime") << where;
    args.insert(args.end() - 1, extra);
    cfg["process"]["args"] = {"/bin/sh", "-c", "echo container-started; exit 0"};
    writeFile(b + "/config.json", cfg.dump(1));
    std::string id = "kdk-line-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
    RunResult r = run("cd / && (timeout 60 " + runtime + " run --bundle " + b + " " + id + " < /dev/null; echo $? > " +
                      b + "/rc) 2>&1 | cat; exit $(cat " + b + "/rc)");
    run(runtime + " delete -f " + id + " >/dev/null 2>&1");
    EXPECT_NE(r.code, 0) << where << ": the container started\n" << r.out;
    EXPECT_EQ(r.out.find("container-started"), std::string::npos) << where << ": the container ran\n" << r.out;
    json line = json::parse(lastLine(log), nullptr, false);
    ASSERT_TRUE(line.is_object()) << where << ": nothing logged; the runtime said (exit " << r.code << "):\n" << r.out;
    EXPECT_EQ(line["decision"], "block") << where;
    EXPECT_NE(line["reason"].get<std::string>().find(says), std::string::npos) << where << ": " << line.dump();
  }
}

}  // namespace

TEST(HookLine, HelpVersionOrAWordOnTheLineRefusesUnderRunc) { lineRefuses("runc", json::object()); }

TEST(HookLine, HelpVersionOrAWordOnTheLineRefusesUnderCrun) {
  lineRefuses("crun", {{"annotations", {{"run.oci.hooks.stderr", "/dev/stderr"}}}});
}

// Through the binary with a state on stdin, as every runtime runs it: --version alone is a hook
// line that checks nothing (warn lets the container start and says so); from a terminal or
// /dev/null it answers.
TEST(HookLine, VersionAloneAnswersAPersonNotARuntime) {
  std::string d = tempDir("lineversion");
  run("mkdir -p " + d + "/rootfs");
  writeFile(d + "/config.json", json({{"ociVersion", "1.0.2"}, {"root", {{"path", "rootfs"}}}}).dump());
  writeFile(d + "/state.json",
            json({{"ociVersion", "1.0.2"}, {"id", "v1"}, {"status", "creating"}, {"pid", 0}, {"bundle", d}}).dump());
  RunResult person = run("timeout 10 " + kHook + " --version < /dev/null");
  EXPECT_EQ(person.code, 0);
  EXPECT_TRUE(person.out.starts_with("kernodeck-hook ")) << person.out;
  RunResult garbage = run("printf 'hello' | timeout 10 " + kHook + " --version");
  EXPECT_TRUE(garbage.out.starts_with("kernodeck-hook ")) << garbage.out;
  RunResult hook = run("timeout 10 " + kHook + " --version < " + d + "/state.json");
  EXPECT_EQ(hook.code, 0) << hook.err;  // warn: the container starts
  EXPECT_EQ(hook.out, "") << "answered a runtime as a person";
  EXPECT_NE(hook.err.find("warning: command line: '--version' is not a runtime-hook argument"), std::string::npos)
      << hook.err;
  RunResult enforce =
      run("timeout 10 " + kHook + " --policy enforce --version --log " + d + "/hook.log < " + d + "/state.json");
  EXPECT_EQ(enforce.code, 2) << enforce.err;
  EXPECT_NE(enforce.err.find("refused: command line: '--version' is not a runtime-hook argument"), std::string::npos)
      << enforce.err;
  json line = json::parse(readFile(d + "/hook.log"), nullptr, false);
  ASSERT_TRUE(line.is_object());
  EXPECT_EQ(line["container"], "v1");
  EXPECT_EQ(line["decision"], "block");
}

// A hook line that begins with one of the hook's subcommands ([kernodeck-hook, hooks-d, --policy,
// enforce]) would print a configuration and exit 0, starting the container unchecked: with a
// runtime state on stdin it refuses under enforce like any other mistake, and logs; run by a
// person (no state on stdin) the subcommand works as before.
TEST(HookLine, ASubcommandOnAHookLineRefusesUnderEnforce) {
  std::string d = tempDir("linesubcommand");
  run("mkdir -p " + d + "/rootfs");
  writeFile(d + "/config.json", json({{"ociVersion", "1.0.2"}, {"root", {{"path", "rootfs"}}}}).dump());
  writeFile(d + "/state.json",
            json({{"ociVersion", "1.0.2"}, {"id", "s1"}, {"status", "creating"}, {"pid", 0}, {"bundle", d}}).dump());
  for (const char* sub : {"hooks-d", "runc-config", "cdi"}) {
    RunResult hook = run("timeout 10 " + kHook + " " + sub + " --policy enforce --log " + d + "/hook.log < " + d +
                         "/state.json");
    EXPECT_EQ(hook.code, 2) << sub << ": " << hook.err << hook.out;
    EXPECT_EQ(hook.out, "") << sub << ": answered a runtime as a person";
    EXPECT_NE(hook.err.find("refused: command line: '" + std::string(sub) + "' is a subcommand"), std::string::npos)
        << sub << ": " << hook.err;
    json line = json::parse(lastLine(d + "/hook.log"), nullptr, false);
    ASSERT_TRUE(line.is_object()) << sub << ": nothing logged";
    EXPECT_EQ(line["decision"], "block") << sub;
  }
  // A person's command: no state on stdin, the subcommand runs (here it names what it lacks).
  RunResult person = run("timeout 10 " + kHook + " hooks-d --policy enforce < /dev/null");
  EXPECT_EQ(person.err.find("is a subcommand"), std::string::npos) << person.err;
}

}  // namespace integration_hook_line_test
