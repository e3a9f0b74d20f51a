// util::runProcess with real programs: argv never reaches a shell, output is bounded, the
// deadline kills the whole process group, and how a child ended comes back as a value.
// Also the source rule that makes this the only place a program is started.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "kernodeck/util/process.h"

namespace util_process_test {

using namespace kernodeck::util;

namespace {

std::string tempDir() {
  char t[] = "/tmp/kdk-process-XXXXXX";
  return ::mkdtemp(t) ? t : "/tmp";
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace

TEST(Process, CapturesOutputAndExitStatus) {
  auto r = runProcess({{"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exitCode, 3);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->describe(), "exited with status 3");
  EXPECT_EQ(r->lastLine(), "err");
}

TEST(Process, ArgumentsAreNeverShellSyntax) {
  std::string dir = tempDir();
  // Every shell metacharacter reaches the program as bytes of one argument.
  for (std::string payload :
       {"x'; touch " + dir + "/owned; echo '", "x\"; touch " + dir + "/owned; echo \"", "`touch " + dir + "/owned`",
        "$(touch " + dir + "/owned)", "; touch " + dir + "/owned", "\ntouch " + dir + "/owned\n",
        "| touch " + dir + "/owned", "&& touch " + dir + "/owned"}) {
    auto r = runProcess({{"printf", "%s", payload}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->out, payload);
    EXPECT_FALSE(exists(dir + "/owned")) << payload;
  }
  (void)removeTree(dir);
}

TEST(Process, SignalTimeoutAndProcessGroup) {
  auto killed = runProcess({{"sh", "-c", "kill -KILL $$"}});
  ASSERT_TRUE(killed.ok());
  EXPECT_FALSE(killed->exited);
  EXPECT_EQ(killed->signal, 9);
  EXPECT_NE(killed->describe().find("signal 9"), std::string::npos);

  // The child and its background grandchild are both stopped at the deadline.
  std::string dir = tempDir();
  ProcessSpec s{{"sh", "-c", "(sleep 1; touch " + dir + "/late) & sleep 30"}};
  s.timeoutMs = 300;
  auto r = runProcess(s);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timedOut);
  EXPECT_LT(r->seconds, 5.0);
  EXPECT_NE(r->describe().find("time limit"), std::string::npos);
  ::sleep(2);
  EXPECT_FALSE(exists(dir + "/late")) << "the grandchild outlived the deadline";
  (void)removeTree(dir);
}

TEST(Process, StdinCwdEnvironmentAndBounds) {
  std::string big(3 << 20, 'x');  // larger than a pipe: written while the output is read
  ProcessSpec cat{{"cat"}};
  cat.stdinData = big;
  cat.maxOutput = 8u << 20;
  auto r = runProcess(cat);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->out.size(), big.size());
  EXPECT_FALSE(r->truncated);

  ProcessSpec bounded{{"head", "-c", "100000", "/dev/zero"}};
  bounded.maxOutput = 1000;
  r = runProcess(bounded);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->truncated);

  ProcessSpec where{{"pwd"}};
  where.cwd = "/usr";
  where.env = {{"KDK_PROCESS_TEST", "a b;c"}};
  r = runProcess(where);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "/usr\n");
  ProcessSpec env{{"env"}};
  env.env = {{"KDK_PROCESS_TEST", "a b;c"}};
  env.unsetEnv = {"HOME"};
  r = runProcess(env);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->out.find("KDK_PROCESS_TEST=a b;c\n"), std::string::npos);
  EXPECT_EQ(r->out.find("\nHOME="), std::string::npos);

  ProcessSpec discard{{"sh", "-c", "echo hidden; echo hidden >&2"}};
  discard.out = ProcessOutput::Discard;
  discard.err = ProcessOutput::Discard;
  r = runProcess(discard);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->out.empty() && r->err.empty());
}

TEST(Process, StartFailuresAreErrors) {
  auto missing = runProcess({{"kdk-no-such-program-here"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().is(kernodeck::ErrorKind::NotFound));
  EXPECT_FALSE(runProcess({{}}).ok());
  ProcessSpec badCwd{{"true"}};
  badCwd.cwd = "/nonexistent/kdk";
  EXPECT_FALSE(runProcess(badCwd).ok());
  // A child that exits without reading its stdin does not kill the parent with SIGPIPE.
  ProcessSpec noRead{{"true"}};
  noRead.stdinData = std::string(1 << 20, 'y');
  auto r = runProcess(noRead);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok());
}

TEST(Process, QuoteCommandForDisplay) {
  struct Case {
    std::vector<std::string> argv;
    std::string shown;
  } cases[] = {
      {{"kernodeck", "sample", "check", "out/x.npy"}, "kernodeck sample check out/x.npy"},
      {{"echo", "a b"}, "echo 'a b'"},
      {{"echo", "it's"}, "echo 'it'\\''s'"},
      {{"echo", "$(touch x)"}, "echo '$(touch x)'"},
      {{"echo", "a\nb"}, "echo $'a\\nb'"},
      {{"echo", "\x1b[2J"}, "echo $'\\x1b[2J'"},
      {{"echo", ""}, "echo ''"},
  };
  for (const auto& c : cases) EXPECT_EQ(quoteCommand(c.argv), c.shown);
}

TEST(Process, RemoveTreeDoesNotFollowLinks) {
  std::string outside = tempDir(), dir = tempDir();
  std::ofstream(outside + "/keep") << "x";
  std::filesystem::create_directories(dir + "/a/b");
  std::ofstream(dir + "/a/b/f") << "y";
  std::filesystem::create_directory_symlink(outside, dir + "/a/link");
  ASSERT_TRUE(removeTree(dir).ok());
  EXPECT_FALSE(exists(dir));
  EXPECT_TRUE(exists(outside + "/keep"));
  EXPECT_TRUE(removeTree(dir).ok());  // already gone: not an error
  EXPECT_FALSE(removeTree("/").ok());
  EXPECT_FALSE(removeTree("").ok());
  EXPECT_FALSE(removeTree("//").ok());
  (void)removeTree(outside);
}

// No program is started anywhere in src/ except through util/process.cc: no popen, system,
// fork, exec*, posix_spawn, and no shell named as a program.
TEST(Process, OnlyProcessCcStartsPrograms) {
  std::regex call(R"(\b(popen|system|fork|vfork|execl|execlp|execle|execv|execvp|execvpe|fexecve|posix_spawnp?)\s*\()");
  // A shell as an argv element ("/bin/sh", ...) or a command line for one; a shebang test that
  // merely looks for "/bin/sh" in a file's first line is not a program start.
  std::regex shell(R"re("(/usr)?(/bin/)?(ba|da|z|k)?sh"\s*[,}]|\bsh -c\b)re");
  std::vector<std::string> offenders;
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(SOURCE_DIR) + "/src")) {
    if (!e.is_regular_file()) continue;
    std::string rel = std::filesystem::relative(e.path(), SOURCE_DIR).string();
    if (rel == "src/util/process.cc") continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, call) || std::regex_search(line, shell))
        offenders.push_back(rel + ":" + std::to_string(n) + ": " + line);
  }
  EXPECT_GT(files, 50u);
  for (const auto& o : offenders) ADD_FAILURE() << "starts a program outside util/process.cc: " << o;
  // The pattern itself catches what it is meant to.
  EXPECT_TRUE(std::regex_search(std::string("  FILE* p = ::popen(cmd.c_str(), \"r\");"), call));
  EXPECT_TRUE(std::regex_search(std::string("std::system(\"rm -rf x\");"), call));
  EXPECT_TRUE(std::regex_search(std::string("argv = {\"/bin/sh\", \"-c\", cmd};"), shell));
  EXPECT_FALSE(std::regex_search(std::string("readFileSystem(x)"), call));
  EXPECT_FALSE(std::regex_search(std::string("if (first.find(\"/bin/sh\") == npos)"), shell));
}

}  // namespace util_process_test
