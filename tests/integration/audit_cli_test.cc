// End-to-end tests of `kernodeck audit`: real images built by kdk-mkimage and
// by Debian's umoci, converted by skopeo, audited through every transport.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "support.h"

namespace integration_audit_cli_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

json baseSpec() {
  return {{"tag", "1.0"},
          {"config", {{"Env", {"PATH=/bin"}}}},
          {"layers", json::array({{{"compression", "gzip"},
                                   {"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=kdk\n"}},
                                                            {{"path", "bin/tool"}, {"content", "tool v1"}}})}},
                                  {{"compression", "none"},
                                   {"entries", json::array({{{"path", "bin/tool"}, {"content", "tool v2"}}})}}})}};
}

std::string blobFile(const std::string& layout, const std::string& digest) {
  return layout + "/blobs/sha256/" + digest.substr(7);
}

json readJsonFile(const std::string& p) { return json::parse(readFile(p)); }

// The manifest of a single-image layout built by mkimage.
json manifestOf(const std::string& layout) {
  json index = readJsonFile(layout + "/index.json");
  return readJsonFile(blobFile(layout, index["manifests"][0]["digest"]));
}

}  // namespace

TEST(AuditCli, CleanImageThroughOciLayout) {
  std::string dir = tempDir("clean") + "/img";
  std::string digest = mkimage(baseSpec(), dir);
  ASSERT_FALSE(digest.empty());
  int code = -1;
  json r = auditJson("oci:" + dir + "@" + digest, &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["schema"], "kernodeck.report/v1");
  EXPECT_EQ(r["subject"]["manifest_digest"], digest);
  EXPECT_EQ(r["subject"]["transport"], "oci");
  EXPECT_EQ(r["findings"].size(), 0u);  // pinned by digest: no image.tag.mutable
  for (const auto& s : r["steps"]) {
    // A tiny image has no dpkg database and no Python: those steps are skipped, with the reason.
    bool packages = s["name"] == "os-packages" || s["name"] == "python";
    EXPECT_EQ(s["status"], packages ? "skipped" : "passed") << s.dump();
  }
  EXPECT_EQ(r["os"]["id"], "kdk");
  ASSERT_EQ(r["layers"].size(), 2u);
  EXPECT_EQ(r["layers"][1]["compression"], "none");
  EXPECT_EQ(r["layers"][0]["files"], 2);
  // By tag the same image is flagged as mutable, and the digest to pin is printed.
  json t = auditJson("oci:" + dir + ":1.0", &code);
  EXPECT_EQ(code, 0);  // a warning is below the default --fail-on error
  ASSERT_EQ(countFindings(t, "image.tag.mutable"), 1);
  EXPECT_NE(t["findings"][0]["message"].get<std::string>().find(digest), std::string::npos);
  auditJson("oci:" + dir + ":1.0 --fail-on warning", &code);
  EXPECT_EQ(code, 1);
}

TEST(AuditCli, TextOutputAndOutputFile) {
  std::string base = tempDir("text");
  std::string dir = base + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  RunResult r = run(K + " audit oci:" + dir);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Steps"), std::string::npos);
  EXPECT_NE(r.out.find("image.tag.mutable"), std::string::npos);
  RunResult o = run(K + " audit --json -o " + base + "/report.json oci:" + dir);
  EXPECT_EQ(o.code, 0);
  EXPECT_TRUE(o.out.empty());
  EXPECT_EQ(readJsonFile(base + "/report.json")["schema"], "kernodeck.report/v1");
}

// `-o /dev/null` or `-o /dev/stdout` (as root) used to rename a temporary file over the device or
// the link: /dev/null became a regular file for every program on the machine. An output that
// exists and is not a regular file (a device, a FIFO, a link to one) is written into, as a shell's
// redirection would; a FIFO stands in for the device, so the test needs no root.
TEST(AuditCli, AnOutputThatIsADeviceOrAFifoIsWrittenIntoNotReplaced) {
  std::string base = tempDir("fifo-out");
  std::string dir = base + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  ASSERT_EQ(::mkfifo((base + "/report.fifo").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((base + "/expect.fifo").c_str(), 0600), 0);
  RunResult r = run("timeout 20 cat " + base + "/report.fifo > " + base + "/report.json & timeout 20 cat " + base +
                    "/expect.fifo > " + base + "/expect.json & " + K + " audit --json -o " + base +
                    "/report.fifo --expect-out " + base + "/expect.fifo oci:" + dir + "; rc=$?; wait; exit $rc");
  EXPECT_EQ(r.code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((base + "/report.fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
  ASSERT_EQ(::lstat((base + "/expect.fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
  EXPECT_EQ(readJsonFile(base + "/report.json")["schema"], "kernodeck.report/v1");
  EXPECT_EQ(readJsonFile(base + "/expect.json")["schema"], "kernodeck.expect/v1");
}

// Issue 39 section 8: another user plants the output path as a link to a FIFO (or a device) in a
// folder they can write; root's `audit -o PATH` must not follow it. The folder is root's and
// group-writable, not sticky, so the kernel's protected_symlinks rule does not apply whatever
// the sysctl; a sticky world-writable folder is tried too (this host runs with
// fs.protected_symlinks=0, as many do). The old binary wrote the report into the FIFO (its
// reader got it) and exited 0; now the write is refused, one line naming the link, exit 3.
TEST(AuditCli, AnOutputLinkPlantedByAnotherUserIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link needs root";
  std::string base = tempDir("link-out");
  std::string dir = base + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  ASSERT_EQ(::mkfifo((base + "/victim.fifo").c_str(), 0600), 0);
  for (const char* mode : {"0775", "1777"}) {
    std::string shared = base + "/shared" + mode;
    ASSERT_EQ(run("mkdir " + shared + " && chmod " + mode + " " + shared + " && ln -s " + base + "/victim.fifo " +
                  shared + "/report.json && chown -h nobody " + shared + "/report.json && ln -s " + base +
                  "/victim.fifo " + shared + "/expect.json && chown -h nobody " + shared + "/expect.json")
                  .code,
              0);
    for (const std::string& flag : {"-o " + shared + "/report.json", "--expect-out " + shared + "/expect.json"}) {
      ::unlink((base + "/got").c_str());
      RunResult r = run("timeout 5 cat " + base + "/victim.fifo > " + base + "/got & timeout 60 " + K +
                        " audit --json " + flag + " oci:" + dir + " > /dev/null; rc=$?; wait; exit $rc");
      EXPECT_EQ(r.code, 3) << mode << " " << flag << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find("refusing to write"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("uid 65534"), std::string::npos) << r.err;
      EXPECT_EQ(readFile(base + "/got"), "") << mode << " " << flag << ": the report went through the link";
    }
  }
  // -o /dev/stdout and -o /dev/null keep working, for root and for another user.
  // (As the other user, the pipe is theirs too: /proc/self/fd/1 of root's pipe is not theirs to open.)
  for (const std::string& as : {std::string(), std::string("setpriv --reuid 65534 --regid 65534 --clear-groups ")}) {
    RunResult out = run(as + "sh -c '" + K + " host --json --host-root /nonexistent -o /dev/stdout | cat'");
    EXPECT_EQ(out.code, 0) << as << out.err;
    EXPECT_TRUE(json::parse(out.out, nullptr, false).is_object()) << as << out.out << out.err;
    RunResult null = run(as + K + " host --json --host-root /nonexistent -o /dev/null");
    EXPECT_EQ(null.code, 0) << as << null.err;
  }
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AuditCli, SecretEnvIsReportedByNameOnly) {
  json spec = baseSpec();
  spec["config"]["Env"] = {"PATH=/bin", "HF_TOKEN=hf_SuperSecretValue1234567890",
                           "PIP_INDEX_URL=https://bob:pw123456@pypi.example.com/simple"};
  std::string dir = tempDir("secret") + "/img";
  ASSERT_FALSE(mkimage(spec, dir).empty());
  RunResult r = run(K + " audit --json oci:" + dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.find("SuperSecretValue"), std::string::npos);
  EXPECT_EQ(r.out.find("pw123456"), std::string::npos);
  EXPECT_EQ(r.err.find("SuperSecretValue"), std::string::npos);
  json j = json::parse(r.out);
  EXPECT_EQ(countFindings(j, "image.secret.env"), 2);
  RunResult text = run(K + " audit oci:" + dir);
  EXPECT_EQ(text.out.find("SuperSecretValue"), std::string::npos);
}

TEST(AuditCli, TamperedLayerIsADigestMismatch) {
  std::string dir = tempDir("tamper") + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  json m = manifestOf(dir);
  std::string layer = blobFile(dir, m["layers"][1]["digest"]);  // the uncompressed one
  std::string bytes = readFile(layer);
  size_t at = bytes.find("tool v2");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 5] = '3';  // same size, different bytes
  writeFile(layer, bytes);
  int code = -1;
  json r = auditJson("oci:" + dir, &code);
  EXPECT_EQ(code, 1);
  EXPECT_GE(countFindings(r, "blob.digest.mismatch"), 1);
  bool named = false;
  for (const auto& f : r["findings"])
    if (f["code"] == "blob.digest.mismatch" && f["digest"] == m["layers"][1]["digest"]) named = true;
  EXPECT_TRUE(named) << r.dump(1);
}

TEST(AuditCli, TamperedConfigIsADigestMismatch) {
  std::string dir = tempDir("tamperc") + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  json m = manifestOf(dir);
  std::string cfg = blobFile(dir, m["config"]["digest"]);
  std::string bytes = readFile(cfg);
  size_t at = bytes.find("PATH=/bin");
  bytes.replace(at, 9, "PATH=/xyz");
  writeFile(cfg, bytes);
  int code = -1;
  json r = auditJson("oci:" + dir, &code);
  EXPECT_EQ(code, 1);
  ASSERT_EQ(countFindings(r, "blob.digest.mismatch"), 1);
}

TEST(AuditCli, TruncatedLayerFailsTheLayerStep) {
  std::string dir = tempDir("trunc") + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  json m = manifestOf(dir);
  std::string layer = blobFile(dir, m["layers"][0]["digest"]);
  std::string bytes = readFile(layer);
  writeFile(layer, bytes.substr(0, bytes.size() / 2));
  int code = -1;
  std::string err;
  json r = auditJson("oci:" + dir, &code, &err);
  EXPECT_EQ(code, 3);
  EXPECT_GE(countFindings(r, "blob.digest.mismatch"), 1);
  EXPECT_EQ(stepStatus(r, "layers"), "failed");
  EXPECT_EQ(stepStatus(r, "os"), "not_reached");
  EXPECT_FALSE(r["first_error"].is_null());
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;  // one line on stderr
}

TEST(AuditCli, MissingBlobFailsWithItsDigest) {
  std::string dir = tempDir("missing") + "/img";
  ASSERT_FALSE(mkimage(baseSpec(), dir).empty());
  json m = manifestOf(dir);
  std::string d = m["layers"][0]["digest"];
  ASSERT_EQ(::unlink(blobFile(dir, d).c_str()), 0);
  int code = -1;
  std::string err;
  json r = auditJson("oci:" + dir, &code, &err);
  EXPECT_EQ(code, 3);
  EXPECT_EQ(countFindings(r, "blob.missing"), 1);
  EXPECT_NE(err.find(d), std::string::npos) << err;
}

// What a runtime rejects is unsafe (error); what it applies inside the root but no build tool
// writes (absolute and '..' names, a write through a symlink, a duplicate) is suspicious.
TEST(AuditCli, HostileEntriesAreUnsafeAndTouchNothingOutside) {
  std::string base = tempDir("hostile");
  std::string outside = base + "/outside";
  json entries = json::array({
      {{"path", "../../../../.." + outside + "/dotdot"}, {"content", "x"}},
      {{"path", outside + "/abs"}, {"content", "x"}},
      {{"path", "a/.wh."}},
      {{"path", ".wh..."}},
      {{"path", "evil"}, {"type", "symlink"}, {"target", outside}},
      {{"path", "hl"}, {"type", "hardlink"}, {"target", "/etc/shadow"}},
      {{"path", "dup"}, {"content", "1"}},
      {{"path", "dup"}, {"content", "2"}},
  });
  json spec = {
      {"layers",
       json::array({{{"compression", "gzip"}, {"entries", entries}},
                    {{"compression", "gzip"}, {"entries", json::array({{{"path", "evil/through"}, {"content", "x"}}})}},
                    {{"compression", "gzip"}, {"entries", json::array({{{"path", ".wh..wh..opq"}}})}}})}};
  std::string dir = base + "/img";
  ASSERT_FALSE(mkimage(spec, dir).empty());
  int code = -1;
  json r = auditJson("oci:" + dir, &code);
  EXPECT_EQ(code, 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "layer.path.unsafe"), 3) << r.dump(1);      // a/.wh., .wh..., hl
  EXPECT_EQ(countFindings(r, "layer.path.suspicious"), 5) << r.dump(1);  // dotdot, abs, hl's target, dup, evil/through
  for (const auto& f : r["findings"])
    if (f["code"] == "layer.path.unsafe" || f["code"] == "layer.path.suspicious") {
      EXPECT_TRUE(f.contains("layer") && f.contains("path")) << f.dump();
    }
  struct stat st {};
  EXPECT_NE(::stat(outside.c_str(), &st), 0);  // nothing was written outside
  EXPECT_EQ(stepStatus(r, "layers"), "passed");
  EXPECT_EQ(r["filesystem"]["entries"], 0);  // the opaque root of the last layer hid everything
}

TEST(AuditCli, MultiPlatformIndexSelection) {
  json amd = baseSpec();
  amd.erase("tag");
  json arm = amd;
  arm["architecture"] = "arm64";
  arm["variant"] = "v8";
  arm["layers"][0]["entries"][0]["content"] = "ID=armos\n";
  json spec = {{"tag", "multi"}, {"platforms", {amd, arm}}};
  std::string dir = tempDir("multi") + "/img";
  ASSERT_FALSE(mkimage(spec, dir).empty());
  int code = -1;
  json r = auditJson("--platform linux/arm64 oci:" + dir, &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["subject"]["platform"], "linux/arm64");
  EXPECT_EQ(r["os"]["id"], "armos");
  EXPECT_TRUE(r["subject"].contains("index_digest"));
  json a = auditJson("--platform linux/amd64 oci:" + dir, &code);
  EXPECT_EQ(a["os"]["id"], "kdk");
  std::string err;
  json miss = auditJson("--platform linux/s390x oci:" + dir, &code, &err);
  EXPECT_EQ(code, 3);
  EXPECT_NE(err.find("linux/arm64"), std::string::npos) << err;
}

TEST(AuditCli, UsageErrors) {
  RunResult r = run(K + " adit x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'audit'"), std::string::npos);
  EXPECT_EQ(run(K + " audit").code, 2);
  EXPECT_EQ(run(K + " audit --fail-on fatal oci:/x").code, 2);
  EXPECT_EQ(run(K + " audit --bogus oci:/x").code, 2);
  EXPECT_EQ(run(K + " audit --platform linux oci:/x").code, 2);
  // No abbreviations (Boost guesses them by default): --fail is not --fail-on, --plat not
  // --platform, --reanal not --reanalyze; each is an unknown option. (The old binary took them and
  // went on to read oci:/x, exit 3.)
  for (const char* flag : {"--fail error", "--plat linux/amd64", "--reanal", "--pol x"}) {
    RunResult abbrev = run(K + " audit " + flag + " oci:/x");
    EXPECT_EQ(abbrev.code, 2) << flag;
    std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    EXPECT_NE(abbrev.err.find("unrecognised option '" + name + "'"), std::string::npos) << abbrev.err;
  }
  RunResult h = run(K + " audit --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("--fail-on"), std::string::npos);
  EXPECT_EQ(run(K).code, 2);
  EXPECT_EQ(run(K + " --help").code, 0);
}

// Issue 50: --gpu takes a compute capability, an architecture or a model; anything else is a usage
// error naming it and the accepted forms. An image without GPU code judges nothing (an info per
// GPU) and gets no gpu_support section.
TEST(AuditCli, GpuTargetsAreCheckedFirstAndJudgedAfter) {
  for (const char* bad : {"RTX6000x", "sm_9", "compute_90", "9.10", "''"}) {
    RunResult r = run(K + " audit --gpu " + bad + " oci:/x");
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    std::string shown = std::string(bad) == "''" ? "" : bad;
    EXPECT_NE(r.err.find("--gpu: '" + shown + "' is not a GPU"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sm_120"), std::string::npos) << r.err;  // the accepted forms
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;        // one line
  }
  RunResult h = run(K + " audit --help");
  EXPECT_NE(h.out.find("--gpu"), std::string::npos);
  std::string dir = tempDir("gpu") + "/img";
  std::string digest = mkimage(baseSpec(), dir);
  ASSERT_FALSE(digest.empty());
  int code = -1;
  json r = auditJson("oci:" + dir + "@" + digest + " --gpu B200 --gpu 'RTX PRO 6000 Blackwell' --gpu sm_90", &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0);
  EXPECT_EQ(countFindings(r, "gpu.arch.unknown"), 3) << r.dump(1);
  EXPECT_FALSE(r.contains("gpu_support"));
}

TEST(AuditCli, BadInputIsOneLineAndExit3) {
  std::string base = tempDir("bad");
  writeFile(base + "/garbage.tar", std::string(3000, '\x42'));
  ::mkdir((base + "/layout").c_str(), 0755);
  writeFile(base + "/layout/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  writeFile(base + "/layout/index.json", "{{{ not json");
  struct Case {
    std::string ref, expect;
  } cases[] = {
      {"oci:" + base + "/nope", "oci-layout"},
      {"oci:" + base + "/layout", "index.json"},
      {"oci-archive:" + base + "/garbage.tar", "garbage.tar"},
      {"docker-archive:" + base + "/absent.tar", "absent.tar"},
      {"dir:" + base + "/absent", "absent"},
      {"--retries 0 localhost:5999/app:1", "cannot reach http://localhost:5999"},
  };
  for (const auto& c : cases) {
    RunResult r = run(K + " audit " + c.ref);
    EXPECT_EQ(r.code, 3) << c.ref << "\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.ref << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.ref << ": " << r.err;
  }
}

// Real tools: an image built with umoci from busybox-static, converted by skopeo
// to oci-archive and docker-archive, and its unpacked rootfs; all audit the same.
TEST(AuditCli, UmociImageThroughEveryTransport) {
  for (const char* tool : {"umoci", "skopeo", "busybox"})
    if (!haveTool(tool)) GTEST_SKIP() << tool << " is not installed (scripts/test installs it)";
  std::string base = tempDir("umoci");
  std::string L = base + "/L", B = base + "/B";
  RunResult b = run("set -e; " + umociBusyboxCommands(L, B) + "; umoci config --image " + L +
                    ":base --config.env HELLO=world; rm -rf " + B + "; " + umociUnpack() + " --image " + L + ":base " +
                    B + " >/dev/null" + "; skopeo copy -q oci:" + L + ":base oci-archive:" + base + "/a.tar:base" +
                    "; skopeo copy -q oci:" + L + ":base docker-archive:" + base + "/d.tar:team/app:1.0");
  ASSERT_EQ(b.code, 0) << b.err;
  std::vector<std::string> refs = {"oci:" + L + ":base", "oci-archive:" + base + "/a.tar:base",
                                   "docker-archive:" + base + "/d.tar",
                                   "docker-archive:" + base + "/d.tar:team/app:1.0"};
  std::string diffId;
  for (const auto& ref : refs) {
    int code = -1;
    json r = auditJson(ref, &code);
    ASSERT_TRUE(r.is_object()) << ref;
    EXPECT_EQ(code, 0) << ref << r.dump(1);
    EXPECT_EQ(r["os"]["id"], "umocitest") << ref;
    EXPECT_EQ(countFindings(r, "blob.digest.mismatch"), 0) << ref;
    ASSERT_GE(r["layers"].size(), 1u) << ref;
    std::string last = r["layers"].back()["diff_id"];
    if (diffId.empty()) diffId = last;
    EXPECT_EQ(last, diffId) << ref;  // the same content whatever the transport
    bool hello = false;
    for (const auto& e : r["image"]["env"]) hello |= e == "HELLO=world";
    EXPECT_TRUE(hello) << ref;
  }
  int code = -1;
  json d = auditJson("rootfs:" + B + "/rootfs", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(d["os"]["id"], "umocitest");
  EXPECT_EQ(d["subject"]["transport"], "rootfs");
  // A tag that is not in the archive.
  RunResult miss = run(K + " audit docker-archive:" + base + "/d.tar:other:2");
  EXPECT_EQ(miss.code, 3);
  EXPECT_NE(miss.err.find("team/app:1.0"), std::string::npos) << miss.err;
}

// Docker 25+ `docker save`: an OCI layout plus manifest.json, in one tar.
TEST(AuditCli, DockerArchiveWithOciLayoutInside) {
  json spec = baseSpec();
  spec["layers"][0]["compression"] = "none";
  std::string base = tempDir("docker25");
  std::string dir = base + "/img";
  ASSERT_FALSE(mkimage(spec, dir).empty());
  json m = manifestOf(dir);
  json mj = json::array({{{"Config", "blobs/sha256/" + m["config"]["digest"].get<std::string>().substr(7)},
                          {"RepoTags", {"example/app:2.0"}},
                          {"Layers",
                           {"blobs/sha256/" + m["layers"][0]["digest"].get<std::string>().substr(7),
                            "blobs/sha256/" + m["layers"][1]["digest"].get<std::string>().substr(7)}}}});
  writeFile(dir + "/manifest.json", mj.dump());
  ASSERT_EQ(run("tar -C " + dir + " -cf " + base + "/save.tar .").code, 0);
  int code = -1;
  json r = auditJson("docker-archive:" + base + "/save.tar:example/app:2.0", &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "kdk");
  EXPECT_EQ(countFindings(r, "image.tag.mutable"), 0);  // an archive holds what it holds
  // The OCI layout inside is preferred: the manifest is the one in it, with its digest.
  EXPECT_EQ(r["subject"]["manifest_digest"], readJsonFile(dir + "/index.json")["manifests"][0]["digest"]) << r.dump(1);
  // Tamper a layer inside the archive: the mismatch is found.
  std::string layer = blobFile(dir, m["layers"][1]["digest"]);
  std::string bytes = readFile(layer);
  bytes[bytes.find("tool v2") + 5] = '9';
  writeFile(layer, bytes);
  ASSERT_EQ(run("tar -C " + dir + " -cf " + base + "/bad.tar .").code, 0);
  json bad = auditJson("docker-archive:" + base + "/bad.tar", &code);
  EXPECT_EQ(code, 1);
  EXPECT_GE(countFindings(bad, "blob.digest.mismatch"), 1);
}

}  // namespace integration_audit_cli_test
