// Issue 29 §2 end to end: an image built by the test carries a torch venv and a cuda-compat
// libcuda.so made with the `.note.cuda.fwd_compatibility` layout NVIDIA documents; `kernodeck audit
// --expect-out` writes a kernodeck.expect/v1 carrying what the note says, and `kernodeck-hook`, run
// with that expectation on the image unpacked by umoci, decides forward compatibility on fixture
// hosts: applies on a driver branch the note lists (550), not on one it does not (470). A library
// without the note and one with a malformed note are findings, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include "../gpu/elf_note_fixture.h"
#include "support.h"

namespace integration_audit_compat_note_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const char* kNote590 =
    R"({"format":1,"CUDA version":"13.1","driver":[535,550,570,575,580,590],"device":[1,2,7,8,9,10]})";

// An image (tag "1") with torch 2.9.0+cu131 in /usr/local/lib/python3.11 and the files LIBS
// (path in the image -> file here), built with kdk-mkimage at DIR/img.
void buildImage(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& libs) {
  std::string site = "usr/local/lib/python3.11/site-packages";
  std::string dist = site + "/torch-2.9.0+cu131.dist-info/";
  json entries = json::array(
      {{{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
       {{"path", site + "/torch/version.py"},
        {"content", "__version__ = '2.9.0+cu131'\ncuda = '13.1'\nhip = None\ngit_version = 'x'\n"}},
       {{"path", dist + "METADATA"}, {"content", "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0+cu131\n"}},
       {{"path", dist + "INSTALLER"}, {"content", "pip\n"}}});
  for (const auto& [path, file] : libs) entries.push_back({{"path", path}, {"content_file", file}, {"mode", 0755}});
  json spec = {{"tag", "1"},
               {"config", {{"Env", {"PYTHON_VERSION=3.11.7"}}}},
               {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
  ASSERT_FALSE(mkimage(spec, dir + "/img").empty());
}

struct Audited {
  int code = -1;
  json report, expect;
  std::string err;
};

Audited audit(const std::string& dir) {
  Audited a;
  RunResult r = run(K + " audit --json --no-cache --expect-out " + dir + "/expect.json oci:" + dir + "/img:1");
  a.code = r.code;
  a.err = r.err;
  a.report = json::parse(r.out, nullptr, false);
  a.expect = json::parse(readFile(dir + "/expect.json"), nullptr, false);
  return a;
}

struct HookRun {
  int code = -1;
  json record;
  std::string err;
};

// The image unpacked by umoci into DIR/bundle, the audit's expectation put where the hook reads
// it, a GPU container's config, and the hook run on HOST under enforce (then warn, for the record
// an enforced refusal does not write).
HookRun hookOn(const std::string& dir, const std::string& host, int uvmMajor) {
  std::string b = dir + "/bundle";
  run("rm -rf " + b);
  RunResult u = run("umoci unpack --image " + dir + "/img:1 " + b);
  EXPECT_EQ(u.code, 0) << u.err;
  run("mkdir -p " + b + "/rootfs/etc/kernodeck && cp " + dir + "/expect.json " + b + "/rootfs/etc/kernodeck/");
  json devices = {{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                  {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", uvmMajor}, {"minor", 0}},
                  {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}};
  writeFile(b + "/config.json", json({{"ociVersion", "1.0.2"},
                                      {"root", {{"path", "rootfs"}}},
                                      {"process", {{"env", {"NVIDIA_VISIBLE_DEVICES=0"}}, {"args", {"/bin/sh"}}}},
                                      {"linux", {{"devices", devices}}}})
                                    .dump());
  writeFile(
      dir + "/state.json",
      json({{"ociVersion", "1.0.2"}, {"id", "auditnote"}, {"status", "creating"}, {"pid", 0}, {"bundle", b}}).dump());
  HookRun h;
  RunResult e = run("timeout 10 " + std::string(HOOK_BIN) + " --policy enforce --host-root " + host + " < " + dir +
                    "/state.json");
  h.code = e.code;
  h.err = e.err;
  run("timeout 10 " + std::string(HOOK_BIN) + " --policy warn --host-root " + host + " < " + dir + "/state.json");
  h.record = json::parse(readFile(b + "/rootfs/run/kernodeck/host.json"), nullptr, false);
  return h;
}

std::vector<json> verdicts(const json& record, const std::string& code) {
  std::vector<json> out;
  for (const auto& v : record["verdicts"])
    if (v["code"] == code) out.push_back(v);
  return out;
}

bool canRun() { return ::geteuid() == 0 && haveTool("umoci"); }

std::string hosts() {
  std::string fixtures = tempDir("notehosts") + "/";
  for (const char* h : {"h100-550-open", "driver-470"})
    EXPECT_EQ(run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + h + " " + fixtures + h).code, 0);
  return fixtures;
}

}  // namespace

TEST(AuditCompatNote, TheExpectationCarriesTheNoteAndTheHookDecidesFromIt) {
  if (!canRun()) GTEST_SKIP() << "needs root (fixture device nodes) and umoci";
  std::string d = tempDir("auditnote");
  writeFile(d + "/libcuda", elfWithFwdCompatNote(kNote590));
  buildImage(d, {{"usr/local/cuda-13.1/compat/libcuda.so.590.44.01", d + "/libcuda"}});
  Audited a = audit(d);
  ASSERT_TRUE(a.report.is_object()) << a.err;
  EXPECT_EQ(countFindings(a.report, "python.torch.inconsistent"), 0) << a.report["findings"].dump(1);
  ASSERT_TRUE(a.expect.is_object()) << a.err;
  EXPECT_EQ(a.expect["schema"], "kernodeck.expect/v1");
  EXPECT_EQ(a.expect["torch"]["cuda"], "13.1");
  // What the note says, not what the file name says (590 alone).
  EXPECT_EQ(a.expect["cuda"]["compat_driver_branches"], json({"535", "550", "570", "575", "580", "590"}));
  ASSERT_EQ(a.expect["cuda"]["compat_libraries"].size(), 1u) << a.expect.dump(1);
  json lib = a.expect["cuda"]["compat_libraries"][0];
  EXPECT_EQ(lib["path"], "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01");
  EXPECT_EQ(lib["driver"], "590.44.01");
  EXPECT_EQ(lib["cuda"], "13.1");
  EXPECT_EQ(lib["driver_branches"], json({535, 550, 570, 575, 580, 590}));
  EXPECT_EQ(lib["devices"], json({1, 2, 7, 8, 9, 10}));

  std::string fixtures = hosts();
  // Driver 550.54.15 runs CUDA 12.4: torch's CUDA 13.1 runs only through the compat library, whose
  // note lists branch 550.
  HookRun listed = hookOn(d, fixtures + "h100-550-open", 508);
  EXPECT_EQ(listed.code, 0) << listed.err;
  ASSERT_TRUE(listed.record.is_object());
  EXPECT_EQ(listed.record["expectation"]["cuda"]["compat_libraries"], a.expect["cuda"]["compat_libraries"]);
  ASSERT_EQ(listed.record["forward_compat"].size(), 1u) << listed.record.dump(1);
  EXPECT_EQ(listed.record["forward_compat"][0]["applies"], true) << listed.record["forward_compat"].dump();
  EXPECT_EQ(verdicts(listed.record, "hook.cuda.forward_compat").size(), 1u);
  EXPECT_EQ(verdicts(listed.record, "hook.cuda.compat").size(), 1u) << listed.record["verdicts"].dump(1);
  EXPECT_TRUE(verdicts(listed.record, "hook.cuda.unsupported").empty()) << listed.record["verdicts"].dump(1);
  EXPECT_EQ(listed.record["decision"], "allow");
  // Driver 470.199.02: the note does not list 470, so the container is refused, the finding naming
  // the branch.
  HookRun unlisted = hookOn(d, fixtures + "driver-470", 509);
  EXPECT_EQ(unlisted.code, 1) << unlisted.err;
  EXPECT_NE(unlisted.err.find("hook.cuda.unsupported"), std::string::npos) << unlisted.err;
  ASSERT_TRUE(unlisted.record.is_object());
  auto fwd = verdicts(unlisted.record, "hook.cuda.forward_compat");
  ASSERT_EQ(fwd.size(), 1u) << unlisted.record["verdicts"].dump(1);
  EXPECT_NE(fwd[0]["message"].get<std::string>().find("not the host's 470"), std::string::npos) << fwd[0].dump();
  EXPECT_EQ(unlisted.record["forward_compat"][0]["applies"], false);
}

TEST(AuditCompatNote, NoNoteAndAMalformedNoteAreFindingsNotCrashes) {
  if (!canRun()) GTEST_SKIP() << "needs root (fixture device nodes) and umoci";
  std::string d = tempDir("auditbadnote");
  // A real ELF shared library of this system: no such note.
  std::string plain = run("ls /usr/lib/x86_64-linux-gnu/libz.so.1* /lib/*/libz.so.1* 2>/dev/null | head -1").out;
  plain.erase(plain.find_last_not_of("\n") + 1);
  ASSERT_FALSE(plain.empty());
  writeFile(d + "/malformed", elfWithFwdCompatNote(R"({"format":1,"CUDA version":13.1,"driver":"550"})"));
  buildImage(d, {{"usr/local/cuda-12.9/compat/libcuda.so.575.57.08", plain},
                 {"usr/local/cuda-13.1/compat/libcuda.so.590.44.01", d + "/malformed"}});
  Audited a = audit(d);
  EXPECT_EQ(a.code, 1) << a.err;  // findings, not a failed step nor a signal
  ASSERT_TRUE(a.report.is_object()) << a.err;
  int named = 0;
  for (const auto& f : a.report["findings"])
    if (f["code"] == "python.torch.inconsistent" &&
        f["message"].get<std::string>().find("/usr/local/cuda-13.1/compat/libcuda.so.590.44.01") != std::string::npos)
      ++named;
  EXPECT_EQ(named, 1) << a.report["findings"].dump(1);
  ASSERT_TRUE(a.expect.is_object());
  // Neither library says which branches it supports: the expectation claims none.
  EXPECT_TRUE(a.expect["cuda"]["compat_libraries"].empty()) << a.expect.dump(1);
  EXPECT_TRUE(a.expect["cuda"]["compat_driver_branches"].empty()) << a.expect.dump(1);

  HookRun h = hookOn(d, hosts() + "h100-550-open", 508);
  ASSERT_TRUE(h.record.is_object()) << h.err;
  ASSERT_EQ(h.record["forward_compat"].size(), 2u) << h.record.dump(1);
  auto invalid = verdicts(h.record, "hook.cuda.compat_note_invalid");
  ASSERT_EQ(invalid.size(), 1u) << h.record["verdicts"].dump(1);
  EXPECT_EQ(invalid[0]["path"], "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01");
  for (const auto& lib : h.record["forward_compat"]) {
    EXPECT_EQ(lib["applies"], false) << lib.dump();
    if (lib["path"] == "/usr/local/cuda-12.9/compat/libcuda.so.575.57.08") {
      EXPECT_NE(lib["why"].get<std::string>().find("no .note.cuda.fwd_compatibility"), std::string::npos);
    }
  }
  // torch's CUDA 13.1 on driver 550 (CUDA 12.4) with no usable compat library: refused.
  EXPECT_EQ(h.code, 1) << h.err;
  EXPECT_NE(h.err.find("hook.cuda.unsupported"), std::string::npos) << h.err;
}

}  // namespace integration_audit_compat_note_test
