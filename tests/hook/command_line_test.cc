#include "kernodeck/hook/command_line.h"

#include <gtest/gtest.h>

namespace hook_command_line_test {

using namespace kernodeck;
using hook::Policy;

namespace {

struct Case {
  std::vector<std::string> args;
  Policy policy;
  const char* error;  // substring of usageError; nullptr: parses
};

}  // namespace

TEST(HookCommandLine, PolicyIsDecidedBeforeAnythingCanFail) {
  std::vector<Case> cases = {
      {{}, Policy::Warn, nullptr},
      {{"createRuntime"}, Policy::Warn, nullptr},
      {{"--policy", "enforce", "prestart"}, Policy::Enforce, nullptr},
      {{"--policy=enforce"}, Policy::Enforce, nullptr},
      {{"--policy=warn", "--host-root", "/h", "--log=/l", "--timeout-ms", "500"}, Policy::Warn, nullptr},
      // The rest of the line is broken: the policy still holds.
      {{"--policy", "enforce", "--host_root", "/h"},
       Policy::Enforce,
       "unknown option '--host_root', did you mean --host-root?"},
      {{"--policy", "enforce", "--timeout-ms", "abc"},
       Policy::Enforce,
       "--timeout-ms takes a number of milliseconds, not 'abc'"},
      {{"--policy", "enforce", "--timeout-ms", "0"}, Policy::Enforce, "--timeout-ms 0 is out of range"},
      {{"--policy", "enforce", "--bogus"}, Policy::Enforce, "unknown option '--bogus'"},
      {{"--policy", "enforce", "--host-root", "/a", "--host-root=/b"},
       Policy::Enforce,
       "--host-root is given more than once"},
      {{"--policy", "enforce", "--log"}, Policy::Enforce, "--log needs a value"},
      {{"--policy", "enforce", "a", "b"}, Policy::Enforce, "one stage argument expected"},
      {{"--policy", "warn", "--host_root", "/h"}, Policy::Warn, "unknown option '--host_root'"},
      // A flag meant as --policy but misspelt or abbreviated: the policy is broken, so enforce.
      {{"--pol=enforce"}, Policy::Enforce, "'--pol' looks like a misspelt --policy"},
      {{"--po", "warn"}, Policy::Enforce, "'--po' looks like a misspelt --policy"},
      {{"--polcy", "warn"}, Policy::Enforce, "'--polcy' looks like a misspelt --policy"},
      {{"--Policy=warn"}, Policy::Enforce, "'--Policy' looks like a misspelt --policy"},
      {{"-policy", "warn"}, Policy::Enforce, "'-policy' looks like a misspelt --policy"},
      {{"--policy", "warn", "--polici", "warn"}, Policy::Enforce, "'--polici' looks like a misspelt --policy"},
      // after --: the stage argument, which must be a stage
      {{"--policy", "warn", "--", "--polcy"}, Policy::Warn, "'--polcy' is not a runtime-hook argument"},
      {{"--policy", "warn", "--", "poststop"}, Policy::Warn, nullptr},
      // Issue 25 §5: --help and --version answer a person; on a hook's line they check nothing.
      {{"--policy", "enforce", "--version", "createRuntime"},
       Policy::Enforce,
       "'--version' is not a runtime-hook argument"},
      {{"--policy", "enforce", "--host-root", "/", "--help"},
       Policy::Enforce,
       "'--help' is not a runtime-hook argument"},
      {{"-h", "createRuntime"}, Policy::Warn, "'--help' is not a runtime-hook argument"},
      {{"--policy", "enforce", "check"},
       Policy::Enforce,
       "'check' is not a runtime-hook argument: the stage is one of"},
      {{"--policy enforce"}, Policy::Enforce, "'--policy enforce' looks like a misspelt --policy"},
      {{"--policy-enforce"}, Policy::Enforce, "'--policy-enforce' looks like a misspelt --policy"},
      {{"--enforce"}, Policy::Enforce, "'--enforce' looks like a misspelt --policy"},
      {{"\xe2\x80\x94policy", "enforce"}, Policy::Enforce, "looks like a misspelt --policy"},  // an em dash
      {{"enforce"}, Policy::Enforce, "'enforce' looks like a misspelt --policy"},
      // Real flags, their values (a log file named after the policy) and the stage are not.
      {{"--policy", "warn", "--log", "/var/log/policy-enforce.log", "--host-root", "/h", "--timeout-ms", "500",
        "createRuntime"},
       Policy::Warn,
       nullptr},
      {{"--policy=warn", "--log=/l", "--host-root=/h", "--timeout-ms=9", "prestart"}, Policy::Warn, nullptr},
      {{"--help"}, Policy::Warn, nullptr},
      {{"-h"}, Policy::Warn, nullptr},
      {{"--version"}, Policy::Warn, nullptr},
      // The policy itself is broken: enforce.
      {{"--policy", "Enforce"}, Policy::Enforce, "--policy takes warn or enforce, not 'Enforce'"},
      {{"--policy", "warn", "--policy", "warn"}, Policy::Enforce, "--policy is given 2 times"},
      {{"--policy=warn", "--policy", "enforce"}, Policy::Enforce, "--policy is given 2 times"},
      {{"--policy"}, Policy::Enforce, "--policy has no value"},
      {{"--policy="}, Policy::Enforce, "--policy takes warn or enforce, not ''"},
  };
  for (const auto& c : cases) {
    std::string where;
    for (const auto& a : c.args) where += a + " ";
    hook::CommandLine cl = hook::parseCommandLine(c.args);
    EXPECT_EQ(cl.options.policy, c.policy) << where;
    if (!c.error) {
      EXPECT_EQ(cl.usageError, "") << where;
    } else {
      EXPECT_NE(cl.usageError.find(c.error), std::string::npos) << where << "-> " << cl.usageError;
      EXPECT_EQ(cl.usageError.find('\n'), std::string::npos) << where;
    }
  }
}

TEST(HookCommandLine, ValuesAreTakenAndTheLogIsKnownEvenOnAUsageError) {
  hook::CommandLine ok = hook::parseCommandLine(
      {"--host-root", "/fake", "--log", "/var/log/k.log", "--timeout-ms=750", "createContainer"});
  EXPECT_EQ(ok.options.hostRoot, "/fake");
  EXPECT_EQ(ok.options.logFile, "/var/log/k.log");
  EXPECT_EQ(ok.timeoutMs, 750u);
  EXPECT_EQ(ok.options.stage, "createContainer");
  hook::CommandLine bad =
      hook::parseCommandLine({"--policy", "enforce", "--log", "/var/log/k.log", "--timeout-ms", "x"});
  EXPECT_FALSE(bad.usageError.empty());
  EXPECT_EQ(bad.options.logFile, "/var/log/k.log");
  hook::CommandLine twoLogs = hook::parseCommandLine({"--log", "/a", "--log", "/b"});
  EXPECT_EQ(twoLogs.options.logFile, "");  // which one would be a guess
}

}  // namespace hook_command_line_test
