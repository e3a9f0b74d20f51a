// The hook reads the image's cuda-compat libraries as NVIDIA Container Toolkit 1.20's
// enable-cuda-compat hook does (issue 29 §2): their `.note.cuda.fwd_compatibility` says which host
// driver branches they run on. Through the real binary, the state on stdin, over fixture hosts:
// a library made by the test with the note's documented layout, on a host branch it lists (550)
// and on one it does not (470).
#include <gtest/gtest.h>
#include <unistd.h>

#include "../gpu/elf_note_fixture.h"
#include "support.h"

namespace integration_hook_compat_test {

using nlohmann::json;
using namespace kdktest;

namespace {

struct HookRun {
  int code = -1;
  json record;
  std::string err;
};

// A bundle whose root holds a CUDA 13.1 compat library (driver 590.44.01, supporting branches
// 535..590) and an expectation for a torch built for CUDA 13.1 whose audit counted only the
// library's own branch (590), as reading the file name did; run on HOST under enforce.
HookRun runOn(const std::string& host, int uvmMajor) {
  std::string d = tempDir("hookcompat");
  std::string compat = d + "/rootfs/usr/local/cuda-13.1/compat";
  run("mkdir -p " + compat + " " + d + "/rootfs/etc/kernodeck && ln -s cuda-13.1 " + d + "/rootfs/usr/local/cuda");
  writeFile(compat + "/libcuda.so.590.44.01",
            elfWithFwdCompatNote(
                R"({"format":1,"CUDA version":"13.1","driver":[535,550,570,575,580,590],"device":[1,2,7,8,9,10]})"));
  writeFile(d + "/rootfs/etc/kernodeck/expect.json", json({{"schema", "kernodeck.expect/v1"},
                                                           {"accelerator", "cuda"},
                                                           {"torch", {{"version", "2.9.0+cu131"}, {"cuda", "13.1"}}},
                                                           {"cuda", {{"compat_driver_branches", {"590"}}}}})
                                                         .dump());
  json devices = {{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                  {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", uvmMajor}, {"minor", 0}},
                  {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}};
  writeFile(d + "/config.json", json({{"ociVersion", "1.0.2"},
                                      {"root", {{"path", "rootfs"}}},
                                      {"process", {{"env", {"NVIDIA_VISIBLE_DEVICES=0"}}, {"args", {"/bin/sh"}}}},
                                      {"linux", {{"devices", devices}}}})
                                    .dump());
  writeFile(
      d + "/state.json",
      json({{"ociVersion", "1.0.2"}, {"id", "compat1"}, {"status", "creating"}, {"pid", 0}, {"bundle", d}}).dump());
  HookRun r;
  RunResult res =
      run("timeout 10 " + std::string(HOOK_BIN) + " --policy enforce --host-root " + host + " < " + d + "/state.json");
  r.code = res.code;
  r.err = res.err;
  // Under enforce a refused container gets no record; run again under warn for it.
  run("timeout 10 " + std::string(HOOK_BIN) + " --policy warn --host-root " + host + " < " + d + "/state.json");
  r.record = json::parse(readFile(d + "/rootfs/run/kernodeck/host.json"), nullptr, false);
  return r;
}

bool hasCode(const json& record, const std::string& code) {
  for (const auto& v : record["verdicts"])
    if (v["code"] == code) return true;
  return false;
}

}  // namespace

TEST(HookCompat, ForwardCompatibilityIsDecidedByTheLibrarysNote) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the fixture hosts' device nodes are made with mknod)";
  std::string fixtures = tempDir("compathosts") + "/";
  for (const char* h : {"h100-550-open", "driver-470"})
    ASSERT_EQ(run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + h + " " + fixtures + h).code, 0);
  // Driver 550.54.15 (CUDA 12.4 natively): branch 550 is listed and 590.44.01 is newer.
  HookRun listed = runOn(fixtures + "h100-550-open", 508);
  EXPECT_EQ(listed.code, 0) << listed.err;
  ASSERT_TRUE(listed.record.is_object());
  ASSERT_EQ(listed.record["forward_compat"].size(), 1u) << listed.record.dump(1);
  json lib = listed.record["forward_compat"][0];
  EXPECT_EQ(lib["path"], "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01");
  EXPECT_EQ(lib["applies"], true) << lib.dump();
  EXPECT_EQ(lib["note"]["driver_branches"], json({535, 550, 570, 575, 580, 590}));
  EXPECT_TRUE(hasCode(listed.record, "hook.cuda.forward_compat"));
  EXPECT_TRUE(hasCode(listed.record, "hook.cuda.compat")) << listed.record["verdicts"].dump(1);
  EXPECT_FALSE(hasCode(listed.record, "hook.cuda.unsupported")) << listed.record["verdicts"].dump(1);
  // Driver 470.199.02: branch 470 is not listed, so the library will not be used.
  HookRun unlisted = runOn(fixtures + "driver-470", 509);
  EXPECT_EQ(unlisted.code, 1) << unlisted.err;
  EXPECT_NE(unlisted.err.find("hook.cuda.unsupported"), std::string::npos) << unlisted.err;
  ASSERT_TRUE(unlisted.record.is_object());
  EXPECT_EQ(unlisted.record["forward_compat"][0]["applies"], false);
  EXPECT_NE(unlisted.record["forward_compat"][0]["why"].get<std::string>().find("not the host's 470"),
            std::string::npos);
}

}  // namespace integration_hook_compat_test
