// Issue 39, sections 1, 2, 5, 6 and 7, through the real binary, against Debian's docker-registry
// (the fallback tag) and tests/integration/referrers_front.py in front of it (an OCI 1.1
// referrers API that reads the query as Go registries do, pages its answer and copies the
// manifests' annotations), as someone who can push but holds no signing key:
// - re-wraps of an old signed pass, listed with created=2099, do not hide a newer signed fail;
// - more distinct envelopes than are read: nothing passes (report.referrers.too_many);
// - a report signed (by the CI key, on a host with a wrong clock) for a future time does not
//   count (report.time.future);
// - `reports` without --key lists, says unverified, exits 1;
// - 64 hostile referrers (28 MB envelopes and envelopes just under the bound) keep `gate` and
//   `reports --key` under 128 MiB;
// - an honest newest pass passes both through the fallback tag and the referrers API.
// KDK_TEST_KERNODECK=/path/to/kernodeck runs the same tests against another build (the old one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/time.h"
#include "local_registry.h"
#include "support.h"

namespace integration_report_window_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

std::string bin() {
  const char* o = std::getenv("KDK_TEST_KERNODECK");
  return o && *o ? o : KERNODECK_BIN;
}

const char* kDsse = "application/vnd.dsse.envelope.v1+json";

class ReportWindow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    front_ = new ReferrersFront;
    plain_ = new ReferrersFront;
    // In memory: the suite pushes some 2,000 small artifacts and 150 MB of hostile envelopes.
    if (!reg_->start(true) || !haveTool("openssl") || !front_->start(*reg_, 10, true) ||
        !plain_->start(*reg_, 7, false))
      return;
    dir_ = new std::string(tempDir("report-window"));
    digests_ = new std::map<std::string, std::string>;
    std::string k = *dir_ + "/";
    writeFile(k + "req.txt", "kernodeck-absent-package==1.0\n");
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "ed.pem && openssl pkey -in " + k +
                 "ed.pem -pubout -out " + k + "ed.pub")
                 .code == 0;
  }
  static void TearDownTestSuite() {
    delete front_;
    delete plain_;
    delete reg_;
  }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl, python3 or openssl unavailable";
  }
  // Builds and pushes the images team/win:NAME, each its own (under ctest every test runs in a
  // process of its own: only the images it names are built), and notes their digests.
  static void push(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=window\n"}},
                                  {{"path", std::string("app/") + name}, {"content", name}}});
      json spec = {{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}};
      mkimage(spec, *dir_ + "/" + name);
      ASSERT_TRUE(reg_->push(*dir_ + "/" + name, "1.0", std::string("team/win:") + name)) << name;
      std::string d = reg_->digestOf(std::string("team/win:") + name);
      ASSERT_FALSE(d.empty()) << name;
      (*digests_)[name] = d;
    }
  }
  // The image TAG as named through HOST (the registry itself: fallback tag; a front: the API).
  static std::string image(const std::string& host, const std::string& tag) { return host + "/team/win:" + tag; }
  static std::string byDigest(const std::string& host, const std::string& tag) {
    return host + "/team/win@" + digests_->at(tag);
  }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  static registry::Client client(const std::string& host) {
    return registry::Client(*registry::parseReference(host + "/team/win"), registry::ClientOptions{.noCache = true});
  }
  static oci::Digest digest(const std::string& tag) { return *oci::parseDigest(digests_->at(tag)); }
  // `kernodeck audit --attach --sign-key ed.pem [EXTRA] HOST/team/win:TAG`: its exit code.
  static int attach(const std::string& host, const std::string& tag, const std::string& extra = "") {
    RunResult r =
        run(bin() + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + extra + " " + image(host, tag));
    if (r.code > 1) ADD_FAILURE() << r.err;
    return r.code;
  }
  // `kernodeck gate --key ed.pub --image HOST/team/win@DIGEST [EXTRA] --json`.
  static RunResult gate(const std::string& host, const std::string& tag, const std::string& extra = "") {
    return run(bin() + " gate --json --retries 0 --key " + key("ed.pub") + " --image " + byDigest(host, tag) + " " +
               extra);
  }
  static RunResult reports(const std::string& host, const std::string& tag, const std::string& extra = "") {
    return run(bin() + " reports --no-cache --json " + extra + " " + image(host, tag));
  }
  // The envelopes attached to TAG as listed through HOST, by the verdict their annotation claims.
  static std::map<std::string, std::pair<registry::FetchedArtifact, std::string>> envelopes(const std::string& host,
                                                                                            const std::string& tag) {
    auto c = client(host);
    std::map<std::string, std::pair<registry::FetchedArtifact, std::string>> out;
    auto refs = registry::listReferrers(c, digest(tag), "application/vnd.kernodeck.report.v1+json");
    if (!refs.ok()) return out;
    for (const auto& r : *refs) {
      auto a = registry::fetchArtifact(c, r.desc.digest.str());
      if (!a.ok()) continue;
      for (const auto& b : a->blobs)
        if (b.mediaType == kDsse)
          if (auto bytes = c.smallBlob(b, 64u << 20); bytes.ok())
            out[a->annotations["dev.kernodeck.verdict"]] = {*a, *bytes};
    }
    return out;
  }
  // Pushes an artifact wrapping ENVELOPE (and LAYERS after it) about TAG through HOST.
  static bool wrap(const std::string& host, const std::string& tag, const std::string& envelope,
                   const std::map<std::string, std::string>& annotations,
                   const std::vector<registry::ArtifactBlob>& more = {}) {
    auto c = client(host);
    auto m = c.manifest(digest(tag).str());
    if (!m.ok()) return false;
    registry::Artifact a;
    a.artifactType = "application/vnd.kernodeck.report.v1+json";
    a.blobs.push_back({kDsse, envelope});
    for (const auto& b : more) a.blobs.push_back(b);
    a.subject = oci::Descriptor{m->mediaType, m->digest, static_cast<int64_t>(m->bytes.size())};
    a.annotations = annotations;
    auto pushed = registry::pushArtifact(c, a);
    if (!pushed.ok()) ADD_FAILURE() << pushed.error().message;
    return pushed.ok();
  }
  // The image TAG's manifest as a subject descriptor.
  static std::optional<oci::Descriptor> subject(const std::string& tag) {
    auto m = client(reg_->host()).manifest(digest(tag).str());
    if (!m.ok()) return std::nullopt;
    return oci::Descriptor{m->mediaType, m->digest, static_cast<int64_t>(m->bytes.size())};
  }
  // Pushes A's blobs (those not in SENT yet) and its manifest, by digest, listing it nowhere;
  // returns the entry that lists it in a fallback index, as pushArtifact writes one.
  static json pushUnlisted(registry::Client& c, const registry::Artifact& a, std::set<std::string>& sent) {
    if (sent.insert(util::sha256Hex("{}")).second) {
      EXPECT_TRUE(c.pushBlob("{}").ok());
    }
    for (const auto& b : a.blobs)
      if (sent.insert(util::sha256Hex(b.bytes)).second) {
        EXPECT_TRUE(c.pushBlob(b.bytes).ok());
      }
    std::string bytes = registry::artifactManifest(a);
    oci::Digest d{"sha256", util::sha256Hex(bytes)};
    auto put = c.putManifest(d.str(), bytes, oci::media::kOciManifest);
    EXPECT_TRUE(put.ok()) << put.error().message;
    json e = {{"mediaType", oci::media::kOciManifest},
              {"digest", d.str()},
              {"size", bytes.size()},
              {"artifactType", a.artifactType}};
    if (!a.annotations.empty()) e["annotations"] = a.annotations;
    return e;
  }
  // Appends ENTRIES to the fallback index of TAG in one write.
  static bool list(registry::Client& c, const std::string& tag, const json& entries) {
    auto index = c.manifest(registry::fallbackTag(digest(tag)));
    if (!index.ok()) return false;
    json idx = json::parse(index->bytes);
    for (const auto& e : entries) idx["manifests"].push_back(e);
    return c.putManifest(registry::fallbackTag(digest(tag)), idx.dump(), oci::media::kOciIndex).ok();
  }
  // ENVELOPE's payload with its predicate's time set to TIME, signed again with the CI key (as a
  // CI host with a wrong clock would sign it).
  static std::string resigned(const std::string& envelope, const std::string& time) {
    auto env = attest::parseEnvelope(envelope);
    EXPECT_TRUE(env.ok());
    json st = json::parse(env->payload);
    st["predicate"]["time"] = time;
    auto k = attest::Key::fromFile(key("ed.pem"));
    EXPECT_TRUE(k.ok());
    auto signedEnv = attest::signEnvelope(env->payloadType, st.dump(), *k);
    EXPECT_TRUE(signedEnv.ok());
    return attest::serializeEnvelope(*signedEnv);
  }
  // Peak RSS in KiB of COMMAND (GNU time -v), and its exit code.
  static long peakRssKiB(const std::string& command, int* code) {
    std::string log = *dir_ + "/time.log";
    RunResult r = run("/usr/bin/time -v -o " + log + " " + command);
    *code = r.code;
    std::string t = readFile(log);
    size_t at = t.find("Maximum resident set size (kbytes): ");
    return at == std::string::npos ? -1 : std::atol(t.c_str() + at + 36);
  }

  static LocalRegistry* reg_;
  static ReferrersFront* front_;  // the referrers API, filters applied, 10 a page
  static ReferrersFront* plain_;  // the referrers API without OCI-Filters-Applied, 7 a page
  static std::string* dir_;
  static std::map<std::string, std::string>* digests_;  // of the images pushed, by name
  static bool ready_;
};

LocalRegistry* ReportWindow::reg_ = nullptr;
ReferrersFront* ReportWindow::front_ = nullptr;
ReferrersFront* ReportWindow::plain_ = nullptr;
std::string* ReportWindow::dir_ = nullptr;
std::map<std::string, std::string>* ReportWindow::digests_ = nullptr;
bool ReportWindow::ready_ = false;

json parsed(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
  return j;
}

TEST_F(ReportWindow, AnHonestNewestPassPassesThroughTheFallbackTagAndTheReferrersApi) {
  // The fallback tag (docker-registry), then the referrers API with filters (the artifactType
  // query must be percent-encoded: a raw '+' is a space to Go's url.ParseQuery, and nothing would
  // match), then one without OCI-Filters-Applied and pages of 7 (the client filters and follows
  // Link). Each: an older fail, then the newest pass, and a cosign-style junk referrer of
  // another type beside them.
  ASSERT_NO_FATAL_FAILURE(push({"honest", "honestapi", "honestplain"}));
  struct Way {
    std::string host, tag;
  } ways[] = {{reg_->host(), "honest"}, {front_->host(), "honestapi"}, {plain_->host(), "honestplain"}};
  for (const auto& w : ways) {
    SCOPED_TRACE(w.host + " " + w.tag);
    ASSERT_EQ(attach(w.host, w.tag, "--fail-on warning -r " + key("req.txt")), 1);
    for (int i = 0; i < 9; ++i) {
      // Other artifacts about the image (another type), so the answer spans pages.
      auto c = client(w.host);
      auto m = c.manifest(digest(w.tag).str());
      ASSERT_TRUE(m.ok());
      registry::Artifact other;
      other.artifactType = "application/vnd.example.sbom.v1+json";
      other.blobs.push_back({"application/json", "{\"n\":" + std::to_string(i) + "}"});
      other.subject = oci::Descriptor{m->mediaType, m->digest, static_cast<int64_t>(m->bytes.size())};
      ASSERT_TRUE(registry::pushArtifact(c, other).ok());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(attach(w.host, w.tag), 0);
    RunResult g = gate(w.host, w.tag);
    EXPECT_EQ(g.code, 0) << g.out << g.err;
    RunResult r = reports(w.host, w.tag, "--key " + key("ed.pub"));
    json j = parsed(r);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(j["reports"].size(), 2u) << r.out;  // the two Kernodeck reports, not the others
    EXPECT_EQ(j["newest"]["verdict"], "pass");
    // --fetch writes the full report, fetched by the digest the signed predicate names.
    RunResult f = run(bin() + " reports --no-cache --key " + key("ed.pub") + " --fetch " + *dir_ + "/" + w.tag +
                      ".json " + image(w.host, w.tag));
    EXPECT_EQ(f.code, 0) << f.out << f.err;
    json full = json::parse(readFile(*dir_ + "/" + w.tag + ".json"), nullptr, false);
    EXPECT_EQ(full["schema"], "kernodeck.report/v1") << full.dump(1).substr(0, 400);
  }
}

TEST_F(ReportWindow, ReWrapsOfAnOldPassListedAsNewerDoNotHideANewerFail) {
  // Section 1: a signed pass, then a newer signed fail; whoever can push re-wraps the old pass's
  // envelope in 70 new manifests annotated created=2099. Through the fallback tag and through the
  // referrers API (where the attacker edits no listing: the registry copies the annotations).
  ASSERT_NO_FATAL_FAILURE(push({"rewrap", "rewrapapi"}));
  for (const auto& [host, tag] : std::vector<std::pair<std::string, std::string>>{{reg_->host(), "rewrap"},
                                                                                 {front_->host(), "rewrapapi"}}) {
    SCOPED_TRACE(tag);
    ASSERT_EQ(attach(host, tag), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(attach(host, tag, "--fail-on warning -r " + key("req.txt")), 1);
    auto envs = envelopes(host, tag);
    ASSERT_TRUE(envs.count("pass")) << "no pass listed";
    const auto& [art, env] = envs["pass"];
    std::vector<registry::ArtifactBlob> rest;  // the old pass's other layers (its report blob)
    auto c = client(host);
    for (const auto& b : art.blobs)
      if (b.mediaType != kDsse)
        if (auto bytes = c.smallBlob(b, 64u << 20); bytes.ok()) rest.push_back({b.mediaType, *bytes});
    for (int i = 0; i < 70; ++i) {
      auto ann = art.annotations;
      char created[32];
      std::snprintf(created, sizeof created, "2099-01-01T00:%02d:%02dZ", i / 60, i % 60);
      ann["org.opencontainers.image.created"] = created;
      ann["n"] = std::to_string(i);
      ASSERT_TRUE(wrap(host, tag, env, ann, rest));
    }
    RunResult g = gate(host, tag, "--max-age 1h");
    json gj = parsed(g);
    EXPECT_EQ(g.code, 1) << g.out;
    EXPECT_EQ(countFindings(gj, "probe.report.failed"), 1) << g.out;
    RunResult r = reports(host, tag, "--key " + key("ed.pub") + " --max-age 1h");
    json j = parsed(r);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(countFindings(j, "report.failed"), 1) << r.out;
    // The 71 manifests of the pass are one report, fetched once (with the Sigstore bundle of the
    // same statement: 71 re-wraps).
    bool grouped = false;
    for (const auto& e : j["reports"])
      if (e.contains("rewraps") && e["rewraps"].size() == 71u) grouped = true;
    EXPECT_TRUE(grouped) << r.out;
  }
}

TEST_F(ReportWindow, MoreDistinctEnvelopesThanAreReadPassNothing) {
  // Past the bound (kMaxReportEnvelopes distinct envelopes) the answer is an error that blocks,
  // not the newest N by anything unsigned: a signed pass is attached, then more junk envelopes
  // than the bound (each unsigned, distinct) beside it, listed in one fallback index write.
  ASSERT_NO_FATAL_FAILURE(push({"many"}));
  ASSERT_EQ(attach(reg_->host(), "many"), 0);
  auto c = client(reg_->host());
  auto subj = subject("many");
  ASSERT_TRUE(subj);
  std::set<std::string> sent;
  json entries = json::array();
  for (size_t i = 0; i < attest::kMaxReportEnvelopes + 1; ++i) {
    registry::Artifact a;
    a.artifactType = "application/vnd.kernodeck.report.v1+json";
    a.blobs.push_back(
        {kDsse, attest::serializeEnvelope({"application/vnd.in-toto+json", "junk " + std::to_string(i), {}})});
    a.subject = subj;
    a.annotations = {{"org.opencontainers.image.created", "2000-01-01T00:00:00Z"}};
    entries.push_back(pushUnlisted(c, a, sent));
  }
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(list(c, "many", entries));
  RunResult g = gate(reg_->host(), "many");
  json gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out.substr(0, 2000);
  EXPECT_EQ(countFindings(gj, "report.referrers.too_many"), 1) << g.out.substr(0, 2000);
  EXPECT_EQ(countFindings(gj, "probe.report.too_many"), 1) << g.out.substr(0, 2000);
  RunResult r = reports(reg_->host(), "many", "--key " + key("ed.pub"));
  json j = parsed(r);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(countFindings(j, "report.too_many"), 1) << r.out.substr(0, 2000);
}

TEST_F(ReportWindow, AReportSignedForTheFutureDoesNotCount) {
  // Section 5: the CI, on a host whose clock said 2031, signed a pass; the same CI then signed a
  // fail (today). The 2031 pass must not outrank it.
  ASSERT_NO_FATAL_FAILURE(push({"future"}));
  ASSERT_EQ(attach(reg_->host(), "future"), 0);
  auto envs = envelopes(reg_->host(), "future");
  ASSERT_TRUE(envs.count("pass"));
  const auto& [art, env] = envs["pass"];
  std::vector<registry::ArtifactBlob> rest;
  auto c = client(reg_->host());
  for (const auto& b : art.blobs)
    if (b.mediaType != kDsse)
      if (auto bytes = c.smallBlob(b, 64u << 20); bytes.ok()) rest.push_back({b.mediaType, *bytes});
  ASSERT_TRUE(wrap(reg_->host(), "future", resigned(env, "2031-01-01T00:00:00.000Z"), art.annotations, rest));
  ASSERT_EQ(attach(reg_->host(), "future", "--fail-on warning -r " + key("req.txt")), 1);
  RunResult g = gate(reg_->host(), "future", "--max-age 30d");
  json gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "report.time.future"), 1) << g.out;
  EXPECT_EQ(countFindings(gj, "probe.report.failed"), 1) << g.out;
  RunResult r = reports(reg_->host(), "future", "--key " + key("ed.pub"));
  json j = parsed(r);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(countFindings(j, "report.time.future"), 1) << r.out;
  // A skew allowance as large as the distance lets it count again (the flag is honoured).
  RunResult wide = reports(reg_->host(), "future", "--key " + key("ed.pub") + " --max-clock-skew 3650d");
  EXPECT_EQ(wide.code, 0) << wide.out;
  EXPECT_EQ(run(bin() + " reports --max-clock-skew soon " + image(reg_->host(), "future")).code, 2);
}

TEST_F(ReportWindow, ReportsWithoutAKeyListButNeverPass) {
  // Section 6: an unsigned copy of a pass (time 2099) beside a signed pass: without --key the
  // listing says unverified and exits 1; nothing says "pass" as a verdict.
  ASSERT_NO_FATAL_FAILURE(push({"nokey"}));
  ASSERT_EQ(attach(reg_->host(), "nokey"), 0);
  auto envs = envelopes(reg_->host(), "nokey");
  ASSERT_TRUE(envs.count("pass"));
  auto env = attest::parseEnvelope(envs["pass"].second);
  ASSERT_TRUE(env.ok());
  json st = json::parse(env->payload);
  st["predicate"]["time"] = "2099-01-01T00:00:00.000Z";
  ASSERT_TRUE(wrap(reg_->host(), "nokey", attest::serializeEnvelope({env->payloadType, st.dump(), {}}),
                   {{"dev.kernodeck.verdict", "pass"}}));
  RunResult r = reports(reg_->host(), "nokey");
  json j = parsed(r);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(countFindings(j, "report.unverified"), 1) << r.out;
  EXPECT_FALSE(j.contains("newest")) << r.out;
  for (const auto& e : j["reports"]) EXPECT_NE(e["signature"], "verified") << e.dump();
  RunResult text = run(bin() + " reports --no-cache " + image(reg_->host(), "nokey"));
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("unverified"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("  pass  "), std::string::npos) << text.out;
}

TEST_F(ReportWindow, SixtyFourHostileReferrersKeepTheGateUnder128MiB) {
  // Section 7: a signed pass, then 64 referrers by someone without the key: 4 with 28 MB unsigned
  // envelopes, 60 with unsigned envelopes just under the bound a report envelope may have. The
  // gate and `reports --key` read the pass and stay under the gate pod's 128 Mi limit.
  ASSERT_NO_FATAL_FAILURE(push({"hostile"}));
  ASSERT_EQ(attach(reg_->host(), "hostile"), 0);
  for (int i = 0; i < 64; ++i) {
    size_t size = i < 4 ? (28u << 20) : (attest::kMaxReportEnvelopeBytes - 1024);
    std::string junk(size * 3 / 4, static_cast<char>('a' + i % 26));
    std::string env = attest::serializeEnvelope({"application/vnd.in-toto+json", junk, {}});
    ASSERT_TRUE(wrap(reg_->host(), "hostile", env, {{"n", std::to_string(i)}}));
  }
  int code = -1;
  long gateKiB = peakRssKiB(bin() + " gate --retries 0 --key " + key("ed.pub") + " --image " +
                                byDigest(reg_->host(), "hostile") + " -o /dev/null",
                            &code);
  std::printf("[ gate, 64 hostile referrers: exit %d, peak RSS %ld KiB ]\n", code, gateKiB);
  EXPECT_EQ(code, 0);
  EXPECT_GT(gateKiB, 0);
  EXPECT_LT(gateKiB, 128 * 1024);
  long reportsKiB = peakRssKiB(
      bin() + " reports --no-cache -o /dev/null --key " + key("ed.pub") + " " + image(reg_->host(), "hostile"), &code);
  std::printf("[ reports --key, 64 hostile referrers: exit %d, peak RSS %ld KiB ]\n", code, reportsKiB);
  EXPECT_EQ(code, 0);
  EXPECT_LT(reportsKiB, 128 * 1024);
}

TEST_F(ReportWindow, FourHundredSignedReportsAreAllReadAndTheNewestDecides) {
  // An image audited daily for more than a year: 400 signed reports (a pass a day, the newest a
  // fail), attached through the fallback tag. All are read and verified (no bound tripped, no
  // report skipped), the newest decides.
  ASSERT_NO_FATAL_FAILURE(push({"year"}));
  ASSERT_EQ(attach(reg_->host(), "year"), 0);
  auto envs = envelopes(reg_->host(), "year");
  ASSERT_TRUE(envs.count("pass"));
  const auto& [art, env] = envs["pass"];
  std::vector<registry::ArtifactBlob> rest;
  auto c = client(reg_->host());
  for (const auto& b : art.blobs)
    if (b.mediaType != kDsse)
      if (auto bytes = c.smallBlob(b, 64u << 20); bytes.ok()) rest.push_back({b.mediaType, *bytes});
  // Pushed one by one, listed in one write of the fallback index (what is claimed is the reading:
  // the index of 400 is rewritten once more below, by the real `audit --attach`).
  auto subj = subject("year");
  ASSERT_TRUE(subj);
  std::set<std::string> sent;
  json entries = json::array();
  int64_t now = util::nowMs();
  for (int day = 399; day >= 1; --day) {
    registry::Artifact a;
    a.artifactType = "application/vnd.kernodeck.report.v1+json";
    a.blobs.push_back({kDsse, resigned(env, util::utcTimestampMs(now - day * 86400000LL))});
    for (const auto& b : rest) a.blobs.push_back(b);
    a.subject = subj;
    a.annotations = {{"day", std::to_string(day)}};
    entries.push_back(pushUnlisted(c, a, sent));
  }
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(list(c, "year", entries));
  ASSERT_EQ(attach(reg_->host(), "year", "--fail-on warning -r " + key("req.txt")), 1);
  auto listed = registry::listReferrers(c, digest("year"), "application/vnd.kernodeck.report.v1+json");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 401u);  // the fallback index lists all 400 and the fail
  int code = -1;
  auto t0 = std::chrono::steady_clock::now();
  long kib = peakRssKiB(bin() + " gate --retries 0 --key " + key("ed.pub") + " --image " +
                            byDigest(reg_->host(), "year") + " --json -o " + *dir_ + "/year.json",
                        &code);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ gate, 401 signed reports: exit %d, %.2f s, peak RSS %ld KiB ]\n", code, s, kib);
  std::string out = readFile(*dir_ + "/year.json");
  json j = json::parse(out, nullptr, false);
  EXPECT_EQ(code, 1) << out.substr(0, 2000);
  EXPECT_EQ(countFindings(j, "probe.report.failed"), 1) << out.substr(0, 2000);
  EXPECT_EQ(out.find("too_many"), std::string::npos);
  // All read: the 400 passes verified, none skipped (an unverifiable one is an error of its own).
  int errors = 0;
  for (const auto& f : j.value("findings", json::array())) errors += f.value("severity", "") == "error";
  EXPECT_EQ(errors, 1) << out.substr(0, 2000);
  EXPECT_LT(kib, 128 * 1024);
}

}  // namespace

}  // namespace integration_report_window_test
