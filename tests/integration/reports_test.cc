// Reports attached to images (`audit --attach`, `reports`) on Debian's docker-registry, which
// has no referrers API, so the fallback tag `sha256-<hex>` is what holds them: a signed report
// verifies with both key types; no report, a report about another image, a signature by
// another key, an unsigned report under --key and a truncated artifact are each a finding (a
// warning beside a verified pass, which still decides).
// `kernodeck probe --require-report` (the init-container gate) reads the same reports: it
// passes only on a passing report signed by its key about its own image.
#include <gtest/gtest.h>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/registry/referrers.h"
#include "local_registry.h"
#include "support.h"

namespace integration_reports_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;

class Reports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl")) return;
    dir_ = new std::string(tempDir("reports"));
    for (const char* name : {"a", "b", "c", "d", "e", "g", "h", "u", "w", "f", "x", "z"}) {
      json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=rep\n"}},
                                  {{"path", std::string("app/") + name}, {"content", name}}});
      // containerd refuses a hardlink to nothing: F's audit fails.
      if (std::string(name) == "f")
        entries.push_back({{"path", "etc/evil"}, {"type", "hardlink"}, {"target", "does/not/exist"}});
      json spec = {{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}};
      mkimage(spec, *dir_ + "/" + name);
      if (!reg_->push(*dir_ + "/" + name, "1.0", std::string("team/app:") + name)) return;
    }
    std::string k = *dir_ + "/";
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "ed.pem && openssl pkey -in " + k +
                 "ed.pem -pubout -out " + k +
                 "ed.pub && "
                 "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " +
                 k + "ec.pem && openssl pkey -in " + k + "ec.pem -pubout -out " + k +
                 "ec.pub && openssl genpkey -algorithm ed25519 -out " + k + "other.pem && openssl pkey -in " + k +
                 "other.pem -pubout -out " + k + "other.pub")
                 .code == 0;
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl or openssl unavailable";
  }
  static std::string image(const std::string& tag) { return reg_->host() + "/team/app:" + tag; }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  // `kernodeck reports ARGS --json`, parsed.
  static json reports(const std::string& args, int* code, std::string* err = nullptr) {
    RunResult r = run(K + " reports --no-cache --json " + args);
    *code = r.code;
    if (err) *err = r.err;
    return json::parse(r.out, nullptr, false);
  }
  static registry::Client client() {
    return registry::Client(*registry::parseReference(reg_->host() + "/team/app"),
                            registry::ClientOptions{.noCache = true});
  }
  // Makes ONTO's fallback index list the reports attached to FROM (tags of team/app): reports
  // about another image. Returns FROM's manifest digest, empty on failure.
  static std::string listReportsOf(const std::string& from, const std::string& onto) {
    auto c = client();
    auto df = oci::parseDigest(reg_->digestOf("team/app:" + from));
    auto dt = oci::parseDigest(reg_->digestOf("team/app:" + onto));
    if (!df.ok() || !dt.ok()) return "";
    auto index = c.manifest(registry::fallbackTag(*df));
    if (!index.ok() || !c.putManifest(registry::fallbackTag(*dt), index->bytes, oci::media::kOciIndex).ok()) return "";
    return df->str();
  }

  // Lists N more report artifacts in TAG's fallback index, after those there: pushed without a
  // subject or a created annotation (each is a problem when read). Returns the entries listed now.
  static size_t appendJunkReports(const std::string& tag, int n) {
    auto c = client();
    auto d = oci::parseDigest(reg_->digestOf("team/app:" + tag));
    if (!d.ok()) return 0;
    auto index = c.manifest(registry::fallbackTag(*d));
    if (!index.ok()) return 0;
    json idx = json::parse(index->bytes);
    for (int i = 0; i < n; ++i) {
      registry::Artifact junk;
      junk.artifactType = attest::kReportArtifactType;
      junk.annotations["n"] = tag + std::to_string(i);
      auto pushed = registry::pushArtifact(c, junk);
      if (!pushed.ok()) return 0;
      json e = {{"mediaType", pushed->mediaType}, {"digest", pushed->digest.str()}, {"size", pushed->size}};
      e["artifactType"] = attest::kReportArtifactType;
      idx["manifests"].push_back(e);
    }
    if (!c.putManifest(registry::fallbackTag(*d), idx.dump(), oci::media::kOciIndex).ok()) return 0;
    return idx["manifests"].size();
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static bool ready_;
};

LocalRegistry* Reports::reg_ = nullptr;
std::string* Reports::dir_ = nullptr;
bool Reports::ready_ = false;

TEST_F(Reports, SignedReportVerifiesWithBothKeyTypesAndNotWithAnotherKey) {
  int code = -1;
  json none = reports(image("a"), &code);
  EXPECT_EQ(code, 1) << none.dump(1);
  EXPECT_EQ(countFindings(none, "report.missing"), 1);

  RunResult audit = run(K + " audit --no-cache --json --attach --sign-key " + key("ed.pem") + " " + image("a"));
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_NE(audit.err.find("attached report sha256:"), std::string::npos) << audit.err;
  json audited = json::parse(audit.out);

  std::string fetched = *dir_ + "/fetched.json";
  json ok = reports("--key " + key("ed.pub") + " --fetch " + fetched + " " + image("a"), &code);
  EXPECT_EQ(code, 0) << ok.dump(1);
  ASSERT_EQ(ok["reports"].size(), 1u);
  EXPECT_EQ(ok["reports"][0]["signature"], "verified");
  EXPECT_EQ(ok["reports"][0]["verdict"], "pass");
  EXPECT_EQ(ok["subject"]["manifest_digest"], audited["subject"]["manifest_digest"]);
  json back = json::parse(readFile(fetched), nullptr, false);
  EXPECT_EQ(back["subject"], audited["subject"]);
  EXPECT_EQ(back["findings"], audited["findings"]);
  // The artifact sits under the spec's fallback tag of the audited manifest.
  std::string digest = audited["subject"]["manifest_digest"];
  RunResult tags = run("curl -s http://" + reg_->host() + "/v2/team/app/tags/list");
  EXPECT_NE(tags.out.find("sha256-" + digest.substr(7)), std::string::npos) << tags.out;

  json other = reports("--key " + key("other.pub") + " " + image("a"), &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(other, "report.signature.invalid"), 1) << other.dump(1);
  EXPECT_EQ(countFindings(other, "report.unverified"), 1);  // the only report does not count

  // A second report, signed with P-256: both are listed, both verify under their own key.
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ec.pem") + " " + image("a")).code, 0);
  json two = reports("--key " + key("ec.pub") + " " + image("a"), &code);
  ASSERT_EQ(two["reports"].size(), 2u) << two.dump(1);
  int verified = 0;
  for (const auto& r : two["reports"]) verified += r["signature"] == "verified";
  EXPECT_EQ(verified, 1);
  // The Ed25519 one has no signature by this key: named and skipped; the verified one passes.
  EXPECT_EQ(code, 0) << two.dump(1);
  EXPECT_EQ(countFindings(two, "report.signature.invalid"), 1);
  EXPECT_EQ(countFindings(two, "report.missing") + countFindings(two, "report.unverified"), 0);
}

TEST_F(Reports, AnUnsignedReportNeverCounts) {
  int code = -1;
  ASSERT_EQ(run(K + " audit --no-cache --attach --unsigned " + image("d")).code, 0);
  // Without --key the report is listed as unverified and nothing passes (issue 39, section 6).
  json plain = reports(image("d"), &code);
  EXPECT_EQ(code, 1) << plain.dump(1);
  EXPECT_EQ(plain["reports"][0]["signature"], "unsigned");
  EXPECT_EQ(countFindings(plain, "report.unverified"), 1) << plain.dump(1);
  json keyed = reports("--key " + key("ed.pub") + " " + image("d"), &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(keyed, "report.signature.missing"), 1) << keyed.dump(1);
}

TEST_F(Reports, AReportAboutAnotherImageIsAFinding) {
  // B's fallback index is made to list a report whose subject is C.
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + image("c")).code, 0);
  std::string dc = listReportsOf("c", "b");
  ASSERT_FALSE(dc.empty());
  int code = -1;
  json r = reports("--key " + key("ed.pub") + " " + image("b"), &code);
  EXPECT_EQ(code, 1);
  // One for each referrer layout the attach wrote (Kernodeck's and the Sigstore bundle).
  EXPECT_EQ(countFindings(r, "report.subject.mismatch"), 2) << r.dump(1);
  EXPECT_NE(r["findings"][0]["message"].get<std::string>().find(dc), std::string::npos);
}

TEST_F(Reports, ATruncatedArtifactIsAFinding) {
  // A signed report of E, and beside it a report artifact whose envelope was cut short.
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + image("e")).code, 0);
  std::string envelope = R"({"payloadType":"application/vnd.in-toto+json","payload":"eyJfdHlwZSI6)";
  auto c = client();
  auto dc = oci::parseDigest(reg_->digestOf("team/app:e"));
  ASSERT_TRUE(dc.ok());
  registry::Artifact a;
  a.artifactType = "application/vnd.kernodeck.report.v1+json";
  a.blobs.push_back({"application/vnd.dsse.envelope.v1+json", envelope});
  auto m = c.manifest(dc->str());
  ASSERT_TRUE(m.ok());
  a.subject = oci::Descriptor{m->mediaType, *dc, static_cast<int64_t>(m->bytes.size())};
  ASSERT_TRUE(registry::pushArtifact(c, a).ok());
  int code = -1;
  json r = reports("--key " + key("ed.pub") + " " + image("e"), &code);
  EXPECT_EQ(code, 0) << r.dump(1);  // the good report beside it decides
  EXPECT_EQ(countFindings(r, "report.artifact.corrupt"), 1) << r.dump(1);
  EXPECT_EQ(r["newest"]["signature"], "verified");
  EXPECT_EQ(run(K + " reports --no-cache --fail-on warning --key " + key("ed.pub") + " " + image("e")).code, 1);
  RunResult text = run(K + " reports --no-cache " + image("e"));
  EXPECT_NE(text.out.find("report.artifact.corrupt"), std::string::npos) << text.out;
}

TEST_F(Reports, JunkReferrersBelowTheBoundAreEachNamedAndTheSignedReportDecides) {
  // Whoever can push writes the fallback tag's index: after X's real, signed report it lists 200
  // more report artifacts, pushed without a subject (so each is a problem when read). All are
  // read (below attest::kMaxReportReferrers: nothing is chosen by an annotation), each is named,
  // and the signed report decides.
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + image("x")).code, 0);
  ASSERT_EQ(appendJunkReports("x", 200), 202u);  // and the report's two referrers
  int code = -1;
  json r = reports("--key " + key("ed.pub") + " " + image("x"), &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["newest"]["signature"], "verified");
  EXPECT_EQ(countFindings(r, "report.subject.mismatch"), 200);
  EXPECT_EQ(countFindings(r, "report.referrers.too_many"), 0) << r.dump(1);
}

TEST_F(Reports, ANewerFailListedAfterManyOthersIsReadAndDecides) {
  // Z audited and attached as a pass; then 70 more report artifacts listed (padding by whoever
  // can push, or a long history of attaches); then Z audited again and attached failing
  // (--fail-on warning: its tag is mutable), listed last. Every listed report is read, and the
  // fail decides.
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + image("z")).code, 0);
  ASSERT_EQ(appendJunkReports("z", 70), 72u);
  RunResult again =
      run(K + " audit --no-cache --attach --fail-on warning --sign-key " + key("ed.pem") + " " + image("z"));
  ASSERT_EQ(again.code, 1) << again.err;
  int code = -1;
  json r = reports("--key " + key("ed.pub") + " " + image("z"), &code);
  EXPECT_EQ(code, 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "report.failed"), 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "report.referrers.too_many"), 0) << r.dump(1);
}

TEST_F(Reports, UsageAndUnreachableRegistry) {
  EXPECT_EQ(run(K + " reports").code, 2);
  EXPECT_EQ(run(K + " reports --key /nonexistent.pem " + image("a")).code, 2);
  RunResult down = run(K + " reports --no-cache --retries 0 127.0.0.1:1/team/app:a");
  EXPECT_EQ(down.code, 3);
  EXPECT_NE(down.err.find("127.0.0.1:1"), std::string::npos) << down.err;
  EXPECT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pub") + " " + image("a")).code,
            2);  // a public key cannot sign
}

// `kernodeck probe --require-report --key PUB --image IMAGE@DIGEST --json`, parsed.
json probeGate(const std::string& args, int* code, std::string* err = nullptr) {
  RunResult r = run(
      K +
      " probe --json --expect cpu --host-record /nonexistent --host-root /nonexistent --retries 0 --require-report " +
      args);
  *code = r.code;
  if (err) *err = r.err;
  return json::parse(r.out, nullptr, false);
}

TEST_F(Reports, ProbeRequiresAPassingReportSignedByItsKeyAboutItsImage) {
  auto byDigest = [](const std::string& tag) {
    return reg_->host() + "/team/app@" + reg_->digestOf("team/app:" + tag);
  };
  auto attach = [](const std::string& tag, const std::string& flags) {
    return run(K + " audit --no-cache --attach " + flags + " " + image(tag)).code;
  };
  int code = -1;
  std::string err;
  // G: a passing report signed with the node's key; the gate passes and the other steps run.
  ASSERT_EQ(attach("g", "--sign-key " + key("ed.pem")), 0);
  json ok = probeGate("--key " + key("ed.pub") + " --image " + byDigest("g"), &code, &err);
  ASSERT_TRUE(ok.is_object()) << err;
  EXPECT_EQ(stepStatus(ok, "attached_report"), "passed") << ok.dump(1);
  EXPECT_TRUE(ok["attached_report"]["met"].get<bool>()) << ok.dump(1);
  EXPECT_EQ(ok["attached_report"]["chosen"]["verdict"], "pass");
  EXPECT_EQ(ok["attached_report"]["manifest_digest"], reg_->digestOf("team/app:g"));
  EXPECT_EQ(stepStatus(ok, "versions"), "passed");
  if (stepStatus(ok, "compute") == "passed") {
    EXPECT_EQ(code, 0) << ok.dump(1);
  }
  // The image may come from the environment the manifest sets instead of --image.
  RunResult env =
      run("KERNODECK_IMAGE=" + byDigest("g") + " " + K +
          " probe --json --expect cpu --host-record /nonexistent --host-root /nonexistent --require-report --key " +
          key("ed.pub"));
  EXPECT_EQ(stepStatus(json::parse(env.out, nullptr, false), "attached_report"), "passed") << env.out << env.err;

  // Each way the requirement is not met is an error finding and exit 1, even under --fail-on none.
  struct Case {
    std::string what, tag, key, code, problem;  // problem: the report.* finding beside it
    int problems = 1;                            // how many: one per artifact read
  } cases[] = {
      {"no report", "h", "ed.pub", "probe.report.missing", ""},
      {"signed by another key", "g", "other.pub", "probe.report.unverified", "report.signature.invalid"},
      {"unsigned", "u", "ed.pub", "probe.report.unverified", "report.signature.missing"},
      {"a failed audit", "f", "ed.pub", "probe.report.failed", ""},
      // G's two referrers (Kernodeck's and the Sigstore bundle), each about G, not W.
      {"a report about another image", "w", "ed.pub", "probe.report.unverified", "report.subject.mismatch", 2},
  };
  ASSERT_EQ(attach("u", "--unsigned"), 0);
  EXPECT_EQ(attach("f", "--sign-key " + key("ed.pem")), 1);
  // W's fallback index is made to list G's signed, passing report.
  ASSERT_FALSE(listReportsOf("g", "w").empty());
  for (const auto& t : cases) {
    json r = probeGate("--fail-on none --key " + key(t.key) + " --image " + byDigest(t.tag), &code);
    EXPECT_EQ(code, 1) << t.what << "\n" << r.dump(1);
    EXPECT_EQ(countFindings(r, t.code), 1) << t.what << "\n" << r.dump(1);
    EXPECT_EQ(stepStatus(r, "attached_report"), "passed") << t.what;  // checked, not met
    EXPECT_FALSE(r["attached_report"]["met"].get<bool>()) << t.what;
    // Not met ends the probe (issue 39 section 11): nothing after it runs. The old probe went
    // on: versions "passed", the LibTorch plugin loaded.
    for (const char* later : {"versions", "devices", "compute", "python", "reconcile"})
      EXPECT_EQ(stepStatus(r, later), "not_reached") << t.what << " " << later;
    if (!t.problem.empty()) {
      EXPECT_EQ(countFindings(r, t.problem), t.problems) << t.what << "\n" << r.dump(1);
    }
  }

  // The plugin is never loaded for an image without a passing report: the dynamic loader's own
  // log (LD_DEBUG=files names every object it opens) does not name it.
  {
    RunResult dbg = run("LD_DEBUG=files " + K +
                        " probe --json --expect cpu --host-record /nonexistent --host-root /nonexistent --retries 0 "
                        "--require-report --key " +
                        key("ed.pub") + " --image " + byDigest("f"));
    EXPECT_EQ(dbg.code, 1) << dbg.err;
    EXPECT_EQ(dbg.err.find("libkernodeck_torch"), std::string::npos) << "the plugin was loaded";
    RunResult good = run("LD_DEBUG=files " + K +
                         " probe --json --expect cpu --host-record /nonexistent --host-root /nonexistent --retries 0 "
                         "--require-report --key " +
                         key("ed.pub") + " --image " + byDigest("g"));
    if (good.err.find("libkernodeck_torch") == std::string::npos) {
      std::printf("note: this build has no LibTorch plugin; the not-loaded check above proves nothing here\n");
    }
  }

  // Could not check: an unreachable registry fails the step (exit 3), never a pass.
  json down = probeGate("--key " + key("ed.pub") + " --image 127.0.0.1:1/team/app@" + reg_->digestOf("team/app:g"),
                        &code, &err);
  EXPECT_EQ(code, 3) << down.dump(1);
  EXPECT_EQ(stepStatus(down, "attached_report"), "failed");
  EXPECT_EQ(stepStatus(down, "versions"), "not_reached");
  EXPECT_NE(err.find("127.0.0.1:1"), std::string::npos) << err;

  // Usage: no key, no image, a tag instead of a digest, a key that does not load, --key alone.
  for (const std::string& args :
       {"--image " + byDigest("g"), "--key " + key("ed.pub"), "--key " + key("ed.pub") + " --image " + image("g"),
        "--key /nonexistent.pem --image " + byDigest("g")}) {
    RunResult u = run("env -u KERNODECK_IMAGE " + K + " probe --require-report " + args);
    EXPECT_EQ(u.code, 2) << args << "\n" << u.err;
    EXPECT_EQ(std::count(u.err.begin(), u.err.end(), '\n'), 1) << u.err;
  }
  EXPECT_EQ(run(K + " probe --key " + key("ed.pub")).code, 2);
}

// `kernodeck gate`, which init-container.yaml runs in Kernodeck's own image: the attached-report
// step alone, with the same decision as probe --require-report, and fail-closed usage.
TEST_F(Reports, GateDecidesFromTheAttachedReportsAlone) {
  auto byDigest = [](const std::string& tag) {
    return reg_->host() + "/team/app@" + reg_->digestOf("team/app:" + tag);
  };
  ASSERT_EQ(run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + image("g")).code, 0);
  RunResult ok = run(K + " gate --json --key " + key("ed.pub") + " --image " + byDigest("g"));
  json r = json::parse(ok.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << ok.out << ok.err;
  EXPECT_EQ(ok.code, 0) << r.dump(1);
  EXPECT_EQ(stepStatus(r, "attached_report"), "passed");
  EXPECT_EQ(r["steps"].size(), 1u) << r.dump(1);  // no device, no LibTorch, no Python
  EXPECT_TRUE(r["attached_report"]["met"].get<bool>());
  // From the variable the manifest sets.
  EXPECT_EQ(run("KERNODECK_IMAGE=" + byDigest("g") + " " + K + " gate --key " + key("ed.pub")).code, 0);

  // Not met: no report, another key. Exit 1, even under --fail-on none, with one line on stderr.
  for (const auto& [tag, pub] : {std::pair{"h", "ed.pub"}, std::pair{"g", "other.pub"}}) {
    RunResult no = run(K + " gate --fail-on none --key " + key(pub) + " --image " + byDigest(tag));
    EXPECT_EQ(no.code, 1) << tag << " " << pub << "\n" << no.out;
    EXPECT_EQ(std::count(no.err.begin(), no.err.end(), '\n'), 1) << no.err;
  }
  // Could not ask: exit 3 naming the registry.
  RunResult down = run(K + " gate --retries 0 --key " + key("ed.pub") + " --image 127.0.0.1:1/team/app@" +
                       reg_->digestOf("team/app:g"));
  EXPECT_EQ(down.code, 3) << down.out;
  EXPECT_NE(down.err.find("127.0.0.1:1"), std::string::npos) << down.err;
  EXPECT_EQ(std::count(down.err.begin(), down.err.end(), '\n'), 1) << down.err;
  // Usage, exit 2 with one line: no key, no image, a tag, a key that does not load, a probe flag.
  for (const std::string& args :
       {"--image " + byDigest("g"), "--key " + key("ed.pub"), "--key " + key("ed.pub") + " --image " + image("g"),
        "--key /nonexistent.pem --image " + byDigest("g"),
        "--key " + key("ed.pub") + " --image " + byDigest("g") + " --expect cpu"}) {
    RunResult u = run("env -u KERNODECK_IMAGE " + K + " gate " + args);
    EXPECT_EQ(u.code, 2) << args << "\n" << u.err;
    EXPECT_EQ(std::count(u.err.begin(), u.err.end(), '\n'), 1) << args << "\n" << u.err;
  }
}

}  // namespace

}  // namespace integration_reports_test
