// The statically linked kernodeck-probe, the part of the probe that runs inside the judged image
// (issue 25 section 1): no dynamic loader, so neither LD_PRELOAD nor an ld.so.preload reaches it,
// and no LibTorch plugin whatever $KERNODECK_TORCH_PLUGIN says; it computes through the image's
// Python as a child process and decides nothing about reports.
#include <gtest/gtest.h>

#include "support.h"

namespace integration_static_probe_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string kProbe = PROBE_BIN;
const std::string kExitZero = EXIT_ZERO_LIB;
const std::string kNoHost = " --host-record /nonexistent --host-root /nonexistent";

class StaticProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kProbe.empty()) GTEST_SKIP() << "the static kernodeck-probe is not built (KERNODECK_STATIC_PROBE)";
  }
};

TEST_F(StaticProbe, IsAStaticExecutable) {
  EXPECT_NE(run("file -L " + kProbe).out.find("statically linked"), std::string::npos);
  RunResult ldd = run("ldd " + kProbe);
  EXPECT_NE((ldd.out + ldd.err).find("not a dynamic executable"), std::string::npos) << ldd.out << ldd.err;
}

// The hostile library, named by both the plugin variable and LD_PRELOAD, would end the process
// with exit 0 and no report the moment it were loaded.
TEST_F(StaticProbe, LoadsNeitherThePluginVariableNorAPreload) {
  std::string env = "KERNODECK_TORCH_PLUGIN=" + kExitZero + " LD_PRELOAD=" + kExitZero + " ";
  RunResult cpu = run(env + kProbe + " --json --expect cpu" + kNoHost);
  json r = json::parse(cpu.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << "exit " << cpu.code << ": " << cpu.out << cpu.err;
  EXPECT_EQ(r["versions"]["loads_libraries"], false) << r.dump(1);
  EXPECT_TRUE(r["versions"]["libtorch"].is_null()) << r.dump(1);
  EXPECT_EQ(stepStatus(r, "compute"), "skipped") << r.dump(1);
  EXPECT_EQ(cpu.code, 0) << cpu.err;

  // A GPU expected on a host without one: the probe fails, and the library cannot make it pass.
  RunResult cuda = run(env + kProbe + " --json --expect cuda --dev-root /nonexistent" + kNoHost);
  EXPECT_NE(cuda.code, 0) << cuda.out;
  json c = json::parse(cuda.out, nullptr, false);
  ASSERT_TRUE(c.is_object()) << cuda.out << cuda.err;
  EXPECT_EQ(stepStatus(c, "devices"), "failed") << c.dump(1);
}

// Without --python it cannot compute on a GPU and says so; with it, the interpreter is a child.
TEST_F(StaticProbe, ComputesOnlyThroughTheImagesPython) {
  RunResult noPy = run(kProbe + " --json --expect cuda --dev-root /" + kNoHost);
  json n = json::parse(noPy.out, nullptr, false);
  ASSERT_TRUE(n.is_object()) << noPy.out << noPy.err;
  EXPECT_NE(noPy.code, 0);
  if (stepStatus(n, "devices") == "passed") {  // a GPU host: the compute step names the way
    EXPECT_EQ(stepStatus(n, "compute"), "failed") << n.dump(1);
  }
  if (!haveTool("python3")) GTEST_SKIP() << "no python3";
  RunResult py = run(kProbe + " --json --expect cpu --python \"$(command -v python3)\"" + kNoHost);
  json p = json::parse(py.out, nullptr, false);
  ASSERT_TRUE(p.is_object()) << py.out << py.err;
  EXPECT_EQ(p["python"]["exit_status"], 0) << p.dump(1);
  EXPECT_TRUE(p["python"]["result"]["python"].is_string()) << p.dump(1);
  EXPECT_EQ(stepStatus(p, "compute"), "skipped") << p.dump(1);
}

// It has no registry client: --require-report is a usage error that names the gate, never a pass.
TEST_F(StaticProbe, RequireReportIsTheGatesJob) {
  RunResult r = run(kProbe + " --require-report --key /nonexistent.pub --image r/x@sha256:" + std::string(64, 'a'));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("kernodeck gate"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace

}  // namespace integration_static_probe_test
