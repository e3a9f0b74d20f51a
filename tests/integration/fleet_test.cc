// The fleet on Debian's docker-registry on loopback: 42 images in three repositories sharing
// base layers (one base carries a hostile tar entry, so its 12 images fail), a plan of 4 shards,
// and 4 `fleet run` workers with empty local caches that share only the registry. The
// registry's own request log shows each unique layer blob fetched exactly once; every image
// gets a report that verifies; `fleet summary` agrees with single-image audits; a worker
// killed mid-shard and run again converges, and a third run redoes nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <set>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/gpu/gpu_code_judge.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/registry/scan_store.h"
#include "local_registry.h"
#include "support.h"

namespace integration_fleet_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;
const char* kRepos[] = {"team/vision", "team/nlp", "team/audio"};
constexpr int kImages = 42;

json layerSpec(const std::string& name, json entries) {
  return {{"compression", "gzip"}, {"entries", std::move(entries)}, {"name", name}};
}

// The three bases, two middle layers, and one app layer per image.
json imageSpec(int k) {
  json bases[] = {
      layerSpec("debian", json::array({{{"path", "etc/os-release"}, {"content", "ID=debian\nVERSION_ID=12\n"}},
                                       {{"path", "usr/lib/base.so"}, {"size", 300000}, {"fill", "b"}}})),
      layerSpec("ubuntu", json::array({{{"path", "etc/os-release"}, {"content", "ID=ubuntu\nVERSION_ID=24.04\n"}},
                                       {{"path", "usr/lib/base.so"}, {"size", 200000}, {"fill", "u"}}})),
      layerSpec("hostile", json::array({{{"path", "etc/os-release"}, {"content", "ID=hostile\n"}},
                                        // containerd refuses a hardlink to nothing: the images fail.
                                        {{"path", "etc/evil"}, {"type", "hardlink"}, {"target", "does/not/exist"}}}))};
  json mids[] = {
      layerSpec("torch", json::array({{{"path", "opt/torch/lib.so"}, {"size", 150000}, {"fill", "t"}}})),
      layerSpec("cuda", json::array({{{"path", "usr/local/cuda/lib.so"}, {"size", 100000}, {"fill", "c"}}}))};
  json app =
      layerSpec("app", json::array({{{"path", "app/main.py"}, {"content", "print(" + std::to_string(k) + ")\n"}}}));
  json layers = json::array({bases[(k / 3) % 3], mids[k % 2], app});
  for (auto& l : layers) l.erase("name");
  return {{"tag", "v" + std::to_string(k)}, {"layers", layers}};
}

// Pushes an OCI layout's single image to REPO:TAG with Kernodeck's own client (faster than
// 42 skopeo runs); returns the manifest digest.
std::string pushLayout(const std::string& layout, const std::string& host, const std::string& repo,
                       const std::string& tag) {
  registry::Client c(*registry::parseReference(host + "/" + repo), registry::ClientOptions{.noCache = true});
  json index = json::parse(readFile(layout + "/index.json"));
  std::string mdigest = index["manifests"][0]["digest"];
  std::string mbytes = readFile(layout + "/blobs/sha256/" + mdigest.substr(7));
  json m = json::parse(mbytes);
  std::vector<std::string> blobs = {m["config"]["digest"]};
  for (const auto& l : m["layers"]) blobs.push_back(l["digest"]);
  for (const auto& b : blobs) EXPECT_TRUE(c.pushBlob(readFile(layout + "/blobs/sha256/" + b.substr(7))).ok());
  auto put = c.putManifest(tag, mbytes, oci::media::kOciManifest);
  EXPECT_TRUE(put.ok()) << (put.ok() ? "" : put.error().message);
  return mdigest;
}

class Fleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl")) return;
    dir_ = new std::string(tempDir("fleet"));
    std::string k = *dir_ + "/";
    writeFile(k + "refs.txt", "");
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "sign.pem && openssl pkey -in " + k +
                 "sign.pem -pubout -out " + k + "sign.pub")
                 .code == 0;
  }
  // Builds and pushes images [built, n) (each test process builds only what it uses); with all
  // of them, a second tag of the first image: one manifest, planned once.
  static void ensureImages(int n) {
    std::string refs = readFile(*dir_ + "/refs.txt");
    for (; built_ < n; ++built_) {
      int k = built_;
      std::string layout = *dir_ + "/img" + std::to_string(k);
      mkimage(imageSpec(k), layout);
      std::string repo = kRepos[k % 3];
      std::string d = pushLayout(layout, reg_->host(), repo, "v" + std::to_string(k));
      (*digests_)[reg_->host() + "/" + repo + "@" + d] = (k / 3) % 3 == 2 ? "fail" : "pass";
      refs += reg_->host() + "/" + repo + ":v" + std::to_string(k) + "\n";
      if (built_ + 1 == kImages) {
        pushLayout(*dir_ + "/img0", reg_->host(), kRepos[0], "latest");
        refs += "# the same manifest under another tag\n" + reg_->host() + "/" + kRepos[0] + ":latest\n";
      }
    }
    writeFile(*dir_ + "/refs.txt", refs);
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl or openssl unavailable";
  }
  static std::string plan(const std::string& cacheRepo, const std::string& out) {
    RunResult r = run(K + " fleet plan " + *dir_ + "/refs.txt --shards 4 --cache-repo " + reg_->host() + "/" +
                      cacheRepo + " -o " + out);
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }
  // Starts a worker in the background; its stderr goes to LOG; returns the pid.
  static int startWorker(const std::string& planFile, int shard, const std::string& extra, const std::string& log) {
    std::string cmd = K + " fleet run --plan " + planFile + " --shard " + std::to_string(shard) + " --sign-key " +
                      *dir_ + "/sign.pem --cache-dir " + tempDir("worker") + " " + extra + " > " + log + ".json 2> " +
                      log;
    return std::atoi(
        run("setsid sh -c '" + cmd + "; echo $? > " + log + ".rc' > /dev/null 2>&1 & echo $!").out.c_str());
  }
  static int waitRc(const std::string& log, int seconds = 240) {
    for (int i = 0; i < seconds * 10; ++i) {
      std::string rc = readFile(log + ".rc");
      if (!rc.empty()) return std::atoi(rc.c_str());
      ::usleep(100000);
    }
    return -1;
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static std::map<std::string, std::string>* digests_;  // image ref -> expected verdict
  static bool ready_;
  static int built_;
};

LocalRegistry* Fleet::reg_ = nullptr;
std::string* Fleet::dir_ = nullptr;
std::map<std::string, std::string>* Fleet::digests_ = new std::map<std::string, std::string>;
bool Fleet::ready_ = false;
int Fleet::built_ = 0;

TEST_F(Fleet, FourWorkersShareTheLayersAndAttachVerifiableReports) {
  ensureImages(kImages);
  std::string planFile = plan("kernodeck/cache", *dir_ + "/plan.json");
  json p = json::parse(readFile(planFile));
  ASSERT_EQ(p["images"].size(), size_t(kImages));  // the second tag of the first image is no extra image
  ASSERT_EQ(p["layers"].size(), size_t(3 + 2 + kImages));
  std::set<std::string> unique;
  for (const auto& l : p["layers"]) unique.insert(l["layer"]["digest"].get<std::string>());
  EXPECT_EQ(unique.size(), p["layers"].size());
  // Balanced by bytes: no shard is more than the largest layer above the lightest.
  std::vector<uint64_t> bytes = p["shard_bytes"];
  EXPECT_LE(*std::max_element(bytes.begin(), bytes.end()) - *std::min_element(bytes.begin(), bytes.end()),
            uint64_t(400000));
  for (const auto& img : p["images"])
    if (img["tags"].size() == 2) {
      EXPECT_EQ(img["tags"][1], "latest");
    }
  // --catalog finds the same images (the referrers and cache tags are not images).
  RunResult cat = run(K + " fleet plan --catalog " + reg_->host() + "/team --shards 4 --cache-repo " + reg_->host() +
                      "/kernodeck/cache");
  ASSERT_EQ(cat.code, 0) << cat.err;
  EXPECT_EQ(json::parse(cat.out)["images"].size(), size_t(kImages));

  std::string logs = tempDir("fleetlogs");
  for (int s = 0; s < 4; ++s) startWorker(planFile, s, "", logs + "/w" + std::to_string(s));
  for (int s = 0; s < 4; ++s) {
    std::string log = logs + "/w" + std::to_string(s);
    EXPECT_EQ(waitRc(log), 0) << readFile(log);
    json out = json::parse(readFile(log + ".json"), nullptr, false);
    ASSERT_TRUE(out.is_object()) << readFile(log);
    EXPECT_EQ(out["layers"]["failed"], 0);
    EXPECT_EQ(out["images"]["failed"], 0);
  }
  // The registry's log: each unique layer blob fetched (GET) exactly once, by one worker.
  for (const auto& d : unique) EXPECT_EQ(countRequests(reg_->log(), "GET", "/blobs/" + d), 1) << d;

  // Every image: a report that verifies; the summary agrees with single-image audits.
  RunResult sum = run(K + " fleet summary --plan " + planFile + " --key " + *dir_ + "/sign.pub --json --html " + *dir_ +
                      "/summary.html");
  EXPECT_EQ(sum.code, 1) << sum.err;  // the images on the hostile base fail
  json s = json::parse(sum.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << sum.out << sum.err;
  EXPECT_EQ(s["verdicts"]["pass"], 30);
  EXPECT_EQ(s["verdicts"]["fail"], 12);  // k / 3 % 3 == 2: the hostile base
  EXPECT_EQ(s["verdicts"]["missing"], 0);
  std::string cache = tempDir("single");
  for (const auto& row : s["images"]) {
    std::string image = row["image"];
    EXPECT_EQ(row["signature"], "verified") << image;
    EXPECT_EQ(row["verdict"], digests_->at(image)) << image;
    int code = -1;
    json single = auditJson("--cache-dir " + cache + " " + image, &code);
    EXPECT_EQ(code, row["verdict"] == "pass" ? 0 : 1) << image;
    EXPECT_EQ(single["summary"]["findings"], row["findings"]) << image;
  }
  ASSERT_FALSE(s["failing_layers"].empty());
  EXPECT_EQ(s["failing_layers"][0]["failing_images"], 12);
  EXPECT_EQ(s["failing_layers"][0]["images"], 12);
  for (const auto& l : s["failing_layers"]) EXPECT_GE(l["images"].get<int>(), 2);  // shared layers only
  EXPECT_EQ(s["findings_by_code"][0]["code"], "layer.path.unsafe");
  std::string html = readFile(*dir_ + "/summary.html");
  EXPECT_NE(html.find(s["failing_layers"][0]["layer"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find("<td class=\"fail\">fail</td>"), std::string::npos);
  RunResult text = run(K + " fleet summary --plan " + planFile);
  EXPECT_NE(text.out.find("pass 30 fail 12 incomplete 0 missing 0"), std::string::npos) << text.out;
}

TEST_F(Fleet, AWorkerKilledMidShardConvergesAndARerunRedoesNothing) {
  ensureImages(kImages);
  // A fresh cache repository; one worker does every layer (--wait 0: none waited for).
  std::string planFile = plan("kernodeck/cache-kill", *dir_ + "/plan-kill.json");
  std::string logs = tempDir("killlogs");
  int pid = startWorker(planFile, 0, "--redo --wait 0", logs + "/first");
  bool sawWalk = false;
  for (int i = 0; i < 12000 && !sawWalk; ++i) {
    sawWalk = readFile(logs + "/first").find(" walked") != std::string::npos;
    if (!sawWalk) ::usleep(5000);
  }
  ASSERT_TRUE(sawWalk) << readFile(logs + "/first");
  ::kill(-pid, SIGKILL);
  ::usleep(200000);
  EXPECT_TRUE(readFile(logs + "/first.rc").empty() || readFile(logs + "/first.rc") != "0\n");

  int second = startWorker(planFile, 0, "--redo --wait 0", logs + "/second");
  ASSERT_EQ(waitRc(logs + "/second"), 0) << readFile(logs + "/second");
  (void)second;
  json out = json::parse(readFile(logs + "/second.json"));
  json p = json::parse(readFile(planFile));
  int owned = 0;
  for (const auto& l : p["layers"]) owned += l["shard"] == 0;
  EXPECT_GE(out["layers"]["shared"].get<int>(), 1);  // what the killed worker pushed is not walked again
  EXPECT_EQ(out["layers"]["shared"].get<int>() + out["layers"]["walked"].get<int>(), owned);
  EXPECT_EQ(out["images"]["failed"], 0);

  int third = startWorker(planFile, 0, "--wait 0", logs + "/third");
  (void)third;
  ASSERT_EQ(waitRc(logs + "/third"), 0) << readFile(logs + "/third");
  json again = json::parse(readFile(logs + "/third.json"));
  EXPECT_EQ(again["layers"]["walked"], 0);
  EXPECT_EQ(again["layers"]["shared"], owned);
  EXPECT_EQ(again["images"]["audited"], 0);
  EXPECT_GE(again["images"]["skipped"].get<int>(), 10);
}

TEST_F(Fleet, CacheRepoIsIdempotentAndReplacesDamagedOrForeignEntries) {
  ensureImages(2);
  std::string image = reg_->host() + "/" + kRepos[1] + ":v1";  // debian base, cuda, its own app layer
  json m = json::parse(readFile(
      *dir_ + "/img1/blobs/sha256/" +
      json::parse(readFile(*dir_ + "/img1/index.json"))["manifests"][0]["digest"].get<std::string>().substr(7)));
  std::vector<std::string> layers;
  for (const auto& l : m["layers"]) layers.push_back(l["digest"]);
  std::string repo = reg_->host() + "/kernodeck/cache-entries";
  // Each audit trusts and signs with the fleet's key (Ed25519: the same entry, the same bytes).
  std::string sign = " --sign-key " + *dir_ + "/sign.pem ";
  auto audit = [&](const std::string& extra = "") {
    return run(K + " audit --json --cache-repo " + repo + sign + " --cache-dir " + tempDir("entries") + " " + extra +
               image);
  };
  auto gets = [&](const std::string& d) { return countRequests(reg_->log(), "GET", "/blobs/" + d); };
  // Two audits at once, each with an empty local cache: both push every layer; same bytes.
  std::string logs = tempDir("entrylogs");
  run("(" + K + " audit --cache-repo " + repo + sign + " --cache-dir " + tempDir("e1") + " " + image + " > " + logs +
      "/a 2>&1; echo $? > " + logs + "/a.rc) & (" + K + " audit --cache-repo " + repo + sign + " --cache-dir " +
      tempDir("e2") + " " + image + " > " + logs + "/b 2>&1; echo $? > " + logs + "/b.rc) & wait");
  EXPECT_EQ(readFile(logs + "/a.rc"), "0\n") << readFile(logs + "/a");
  EXPECT_EQ(readFile(logs + "/b.rc"), "0\n") << readFile(logs + "/b");
  registry::Client c(*registry::parseReference(repo), registry::ClientOptions{.noCache = true});
  std::map<std::string, std::string> entry;  // layer -> its entry's manifest digest
  for (const auto& l : layers) {
    auto e = c.manifest(registry::scanTag(*oci::parseDigest(l)));
    ASSERT_TRUE(e.ok()) << l;
    entry[l] = e->digest.str();
  }
  // A third audit with an empty local cache reads every layer from the repository.
  std::map<std::string, int> before;
  for (const auto& l : layers) before[l] = gets(l);
  RunResult third = audit();
  EXPECT_EQ(third.code, 0) << third.err;
  for (const auto& l : layers) EXPECT_EQ(gets(l), before[l]) << "fetched again: " << l;

  // Foreign: layer 0's entry holds layer 1's result. Damaged: layer 2's entry is torn (and unsigned).
  auto foreign = c.manifest(registry::scanTag(*oci::parseDigest(layers[1])));
  ASSERT_TRUE(foreign.ok());
  ASSERT_TRUE(
      c.putManifest(registry::scanTag(*oci::parseDigest(layers[0])), foreign->bytes, oci::media::kOciManifest).ok());
  registry::Artifact torn;
  torn.artifactType = registry::kLayerScanArtifactType;
  torn.blobs.push_back({registry::kLayerScanMediaType, "{\"digest\":\"" + layers[2] + "\",\"entries\":5}\npartial"});
  torn.annotations = {{"dev.kernodeck.layer", layers[2]}, {"dev.kernodeck.analysis-version", "1"}};
  ASSERT_TRUE(registry::pushArtifact(c, torn, registry::scanTag(*oci::parseDigest(layers[2]))).ok());
  for (const auto& l : layers) before[l] = gets(l);
  RunResult fourth = audit();
  EXPECT_EQ(fourth.code, 0) << fourth.err;
  // The same findings, and one cache.shared.ignored (info) for each entry ignored.
  json r3 = json::parse(third.out), r4 = json::parse(fourth.out);
  EXPECT_EQ(r4["summary"]["verdict"], r3["summary"]["verdict"]);
  EXPECT_EQ(countFindings(r4, "cache.shared.ignored"), 2);
  EXPECT_EQ(countFindings(r3, "cache.shared.ignored"), 0);
  EXPECT_EQ(r4["findings"].size(), r3["findings"].size() + 2);
  EXPECT_EQ(gets(layers[0]), before[layers[0]] + 1);  // ignored, walked, replaced
  EXPECT_EQ(gets(layers[1]), before[layers[1]]);
  EXPECT_EQ(gets(layers[2]), before[layers[2]] + 1);
  for (const auto& l : layers)
    EXPECT_EQ(c.manifest(registry::scanTag(*oci::parseDigest(l)))->digest.str(), entry[l]) << l;
  EXPECT_EQ(run(K + " audit --cache-repo " + reg_->host() + "/x:tag " + image).code, 2);
}

// Issue 39 §3: the gate's --max-age only bounds an old pass if the fleet re-audits images whose
// newest report ages, and not only those that have none. With --reaudit-older-than, an image
// whose newest verified report was signed longer ago (as of the run's start) is audited again;
// one with a fresh report is still skipped.
TEST_F(Fleet, ReauditOlderThanReauditsAnImageWithAnOldReportAndSkipsAFreshOne) {
  ensureImages(2);
  const std::string oldImage = reg_->host() + "/" + kRepos[0] + ":v0", freshImage = reg_->host() + "/" + kRepos[1] + ":v1";
  writeFile(*dir_ + "/refs-age.txt", oldImage + "\n" + freshImage + "\n");
  std::string planFile = *dir_ + "/plan-age.json";
  RunResult p = run(K + " fleet plan " + *dir_ + "/refs-age.txt --shards 1 --cache-repo " + reg_->host() +
                    "/kernodeck/cache-age -o " + planFile);
  ASSERT_EQ(p.code, 0) << p.err;
  std::string sign = " --sign-key " + *dir_ + "/sign.pem ";
  ASSERT_EQ(run(K + " audit --no-cache --attach" + sign + oldImage).code, 0);
  ::sleep(3);
  ASSERT_EQ(run(K + " audit --no-cache --attach" + sign + freshImage).code, 0);
  auto reportCount = [&](const std::string& image) {
    RunResult r = run(K + " reports --no-cache --json --key " + *dir_ + "/sign.pub " + image);
    json j = json::parse(r.out, nullptr, false);
    return j.is_object() && j["reports"].is_array() ? int(j["reports"].size()) : -1;
  };
  // (Earlier tests of this process may have attached reports too: counted from here.)
  int oldBefore = reportCount(oldImage), freshBefore = reportCount(freshImage);
  ASSERT_GE(oldBefore, 1);
  ASSERT_GE(freshBefore, 1);

  RunResult r = run(K + " fleet run --plan " + planFile + " --shard 0 --wait 0 --reaudit-older-than 2s" + sign +
                    "--cache-dir " + tempDir("age"));
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  EXPECT_EQ(out["images"]["audited"], 1) << out.dump(1);
  EXPECT_EQ(out["images"]["skipped"], 1) << out.dump(1);
  std::map<std::string, std::string> status;
  json p2 = json::parse(readFile(planFile));
  for (const auto& e : out["log"])
    if (e.contains("image")) status[e["image"]] = e.value("status", "");
  for (const auto& img : p2["images"]) {
    std::string ref = img["repository"].get<std::string>() + "@" + img["manifest"]["digest"].get<std::string>();
    bool isOld = img["tags"][0] == "v0";
    EXPECT_EQ(status[ref], isOld ? "audited" : "skipped") << ref << " " << out.dump(1);
  }
  EXPECT_NE(r.err.find("older than 2s"), std::string::npos) << r.err;
  EXPECT_EQ(reportCount(oldImage), oldBefore + 1);  // audited again: a new report, signed now
  EXPECT_EQ(reportCount(freshImage), freshBefore);

  // Right after, nothing is older than a day: both are skipped; a bad age is a usage error.
  r = run(K + " fleet run --plan " + planFile + " --shard 0 --wait 0 --reaudit-older-than 1d" + sign +
          "--cache-dir " + tempDir("age"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["images"]["skipped"], 2) << r.out;
  r = run(K + " fleet run --plan " + planFile + " --shard 0 --reaudit-older-than 7" + sign);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--reaudit-older-than"), std::string::npos) << r.err;
}

TEST_F(Fleet, BadInvocations) {
  EXPECT_EQ(run(K + " fleet").code, 2);
  EXPECT_EQ(run(K + " fleet plna").code, 2);
  EXPECT_EQ(run(K + " fleet plan " + *dir_ + "/refs.txt").code, 2);  // no --cache-repo
  EXPECT_EQ(run(K + " fleet plan /nonexistent --cache-repo " + reg_->host() + "/c").code, 3);
  writeFile(*dir_ + "/garbage.json", "{\"schema\": \"something else\"}");
  RunResult r = run("env -u JOB_COMPLETION_INDEX " + K + " fleet run --plan " + *dir_ + "/garbage.json");
  EXPECT_EQ(r.code, 2);
  r = run(K + " fleet run --shard 0 --plan " + *dir_ + "/garbage.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kernodeck.fleet-plan/v1"), std::string::npos) << r.err;
  writeFile(*dir_ + "/missing-ref.txt", reg_->host() + "/team/nosuch:1\n");
  r = run(K + " fleet plan " + *dir_ + "/missing-ref.txt --cache-repo " + reg_->host() + "/c");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("team/nosuch"), std::string::npos) << r.err;
}

}  // namespace

// An image whose reports cannot be listed (its registry does not answer) is "unreadable", not
// "missing": nothing is known about it, and the row says why.
TEST(FleetSummary, AnImageWhoseReportsCannotBeListedIsUnreadableNotMissing) {
  std::string d = tempDir("fleet-unreadable");
  std::string digest = "sha256:" + std::string(64, 'a');
  json plan = {
      {"schema", "kernodeck.fleet-plan/v1"},
      {"shards", 1},
      {"cache_repo", "127.0.0.1:1/cache"},
      {"images",
       {{{"repository", "127.0.0.1:1/team/app"},
         {"tags", {"1.0"}},
         {"manifest", {{"mediaType", "application/vnd.oci.image.manifest.v1+json"}, {"digest", digest}, {"size", 10}}},
         {"layers", json::array()},
         {"shard", 0}}}},
      {"layers", json::array()}};
  writeFile(d + "/plan.json", plan.dump());
  RunResult r = run(K + " fleet summary --retries 0 --json --plan " + d + "/plan.json");
  EXPECT_EQ(r.code, 3) << r.err;
  json s = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << r.out << r.err;
  EXPECT_EQ(s["verdicts"]["unreadable"], 1);
  EXPECT_EQ(s["verdicts"]["missing"], 0);
  ASSERT_EQ(s["images"].size(), 1u);
  EXPECT_EQ(s["images"][0]["verdict"], "unreadable");
  EXPECT_NE(s["images"][0]["problem"].get<std::string>().find("127.0.0.1:1"), std::string::npos) << s.dump(1);
  RunResult text = run(K + " fleet summary --retries 0 --plan " + d + "/plan.json");
  EXPECT_NE(text.out.find("missing 0 unreadable 1"), std::string::npos) << text.out;
}

// Issue 51 §3: a finding an exceptions file waived is counted apart from the live ones: an image
// whose only error is waived passes, and its row and the findings by code say "suppressed".
TEST(FleetSummary, SuppressedFindingsAreCountedApartFromLiveOnes) {
  LocalRegistry reg;
  if (!reg.start()) GTEST_SKIP() << "docker-registry, skopeo or curl unavailable";
  std::string d = tempDir("fleet-suppressed");
  ASSERT_EQ(run(std::string(MKIMAGE_BIN) + " " + SOURCE_DIR + "/examples/demo/image.json " + d + "/demo").code, 0);
  ASSERT_TRUE(reg.push(d + "/demo", "1.0", "team/demo:1.0"));
  ASSERT_EQ(run("openssl genpkey -algorithm ed25519 -out " + d + "/key.pem && openssl pkey -in " + d +
                "/key.pem -pubout -out " + d + "/key.pub")
                .code,
            0);
  std::string expires = run("date -u -d '+60 days' +%F").out;  // within the year an exception may run
  expires.erase(expires.find_last_not_of('\n') + 1);
  // The demo image's three errors waived (the issue's case: three waived errors beside a pass).
  std::string ex = "schema: kernodeck.exceptions/v1\nexceptions:\n";
  for (const char* code : {"image.secret.env", "python.pin.mismatch", "python.requirement.conflict"})
    ex += std::string("  - code: ") + code + "\n    reason: \"waived in a test\"\n    expires: " + expires + "\n";
  writeFile(d + "/exceptions.yaml", ex);
  RunResult a = run(K + " audit --no-cache --exceptions " + d + "/exceptions.yaml --attach --sign-key " + d + "/key.pem " +
                    reg.host() + "/team/demo:1.0 2>&1");
  ASSERT_EQ(a.code, 0) << a.out;
  writeFile(d + "/refs.txt", reg.host() + "/team/demo:1.0\n");
  RunResult p = run(K + " fleet plan " + d + "/refs.txt --shards 1 --cache-repo " + reg.host() + "/cache -o " + d +
                    "/plan.json 2>&1");
  ASSERT_EQ(p.code, 0) << p.out;
  RunResult r = run(K + " fleet summary --json --plan " + d + "/plan.json --key " + d + "/key.pub");
  json s = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << r.out << r.err;
  ASSERT_EQ(s["images"].size(), 1u);
  EXPECT_EQ(s["images"][0]["verdict"], "pass") << s.dump(1);
  EXPECT_EQ(s["images"][0]["findings"]["error"], 0) << s.dump(1);
  EXPECT_EQ(s["images"][0]["suppressed"]["error"], 3) << s.dump(1);
  bool listed = false;
  for (const auto& c : s["findings_by_code"])
    if (c["code"] == "image.secret.env") {
      listed = true;
      EXPECT_EQ(c["images"], 0) << c.dump();
      EXPECT_EQ(c["suppressed_images"], 1) << c.dump();
    }
  EXPECT_TRUE(listed) << s.dump(1);
  RunResult text = run(K + " fleet summary --plan " + d + "/plan.json --key " + d + "/key.pub");
  EXPECT_NE(text.out.find("0  image.secret.env (error; suppressed in 1)"), std::string::npos) << text.out;
}

// Issue 50: `fleet summary`'s matrix of images x GPU generations, from real audits of three images
// in a registry whose reports are attached signed. Each report carries the gpu_support section an
// audit writes for the GPU code it read (until the layer scan reads fatbins, the section is made
// here from a hand-written gpu_code by the same code the audit uses); a fourth report has none.
TEST(FleetSummary, ShowsTheGpuGenerationsOfSeveralImages) {
  LocalRegistry reg;
  if (!reg.start(/*inMemory=*/true) || !haveTool("openssl")) GTEST_SKIP() << "docker-registry or openssl unavailable";
  std::string d = tempDir("fleet-gpu");
  ASSERT_EQ(run("openssl genpkey -algorithm ed25519 -out " + d + "/sign.pem && openssl pkey -in " + d +
                "/sign.pem -pubout -out " + d + "/sign.pub")
                .code,
            0);
  auto key = attest::Key::fromFile(d + "/sign.pem");
  ASSERT_TRUE(key.ok());
  struct Image {
    const char* tag;
    std::vector<std::string> sass, ptx;
    bool gpu;
  } images[] = {
      {"cu118", {"sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, {}, true},
      {"cu121", {"sm_80", "sm_90"}, {"compute_90"}, true},
      {"cu128", {"sm_80", "sm_90", "sm_100", "sm_120"}, {"compute_120"}, true},
      {"cpu", {}, {}, false},
  };
  std::string refs;
  for (const auto& img : images) {
    std::string layout = d + "/" + img.tag;
    json spec = {{"tag", img.tag},
                 {"layers", json::array({{{"compression", "gzip"},
                                          {"entries", json::array({{{"path", "etc/os-release"},
                                                                    {"content", "ID=debian\nVERSION_ID=12\n"}},
                                                                   {{"path", "app/" + std::string(img.tag)},
                                                                    {"content", img.tag}}})}}})}};
    ASSERT_FALSE(mkimage(spec, layout).empty()) << img.tag;
    std::string digest = pushLayout(layout, reg.host(), "team/gpu", img.tag);
    std::string ref = reg.host() + "/team/gpu@" + digest;
    RunResult a = run(K + " audit --json --cache-dir " + tempDir("gpu-audit") + " " + ref);
    json report = json::parse(a.out, nullptr, false);
    ASSERT_TRUE(report.is_object()) << img.tag << ": " << a.err;
    if (img.gpu) {
      std::vector<gpu::GpuCode> code = {{"/opt/torch/lib/libtorch_cuda.so", "", img.sass, img.ptx, false}};
      report["gpu_support"] = {{"libraries", 1}, {"generations", gpu::generationSupport(code)}};
    }
    auto attached = attest::attachReport(report, registry::ClientOptions{.noCache = true}, &*key);
    ASSERT_TRUE(attached.ok()) << img.tag << ": " << attached.error().message;
    refs += reg.host() + "/team/gpu:" + img.tag + "\n";
  }
  writeFile(d + "/refs.txt", refs);
  RunResult p = run(K + " fleet plan " + d + "/refs.txt --shards 1 --cache-repo " + reg.host() +
                    "/kernodeck/cache -o " + d + "/plan.json");
  ASSERT_EQ(p.code, 0) << p.err;
  RunResult r = run(K + " fleet summary --json --plan " + d + "/plan.json --key " + d + "/sign.pub");
  EXPECT_EQ(r.code, 0) << r.err;
  json s = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << r.out << r.err;
  EXPECT_EQ(s["gpu_generations"], json({"Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell"}));
  std::map<std::string, json> byTag;
  for (const auto& row : s["images"]) byTag[row["tags"][0]] = row;
  ASSERT_EQ(byTag.size(), 4u) << s.dump(1);
  EXPECT_EQ(byTag["cu118"]["gpu_generations"]["Volta"], "sass");
  EXPECT_EQ(byTag["cu118"]["gpu_generations"]["Blackwell"], "none");
  EXPECT_EQ(byTag["cu121"]["gpu_generations"]["Turing"], "none");
  EXPECT_EQ(byTag["cu121"]["gpu_generations"]["Blackwell"], "ptx");
  EXPECT_EQ(byTag["cu128"]["gpu_generations"]["Blackwell"], "sass");
  EXPECT_FALSE(byTag["cpu"].contains("gpu_generations"));
  RunResult text = run(K + " fleet summary --plan " + d + "/plan.json --key " + d + "/sign.pub");
  EXPECT_NE(text.out.find("GPU generations"), std::string::npos) << text.out;
  std::string host = reg.host() + "/team/gpu:";
  for (const auto& [tag, cells] : std::map<std::string, std::string>{
           {"cu118", "sass      sass      sass      sass      sass      none"},
           {"cu121", "none      none      sass      sass      sass      ptx"},
           {"cu128", "none      none      sass      sass      sass      sass"},
           {"cpu", "-         -         -         -         -         -"}}) {
    size_t at = text.out.find("  " + host + tag + " ");
    ASSERT_NE(at, std::string::npos) << tag << "\n" << text.out;
    std::string line = text.out.substr(at, text.out.find('\n', at) - at);
    EXPECT_NE(line.find(cells), std::string::npos) << line;
  }
}

}  // namespace integration_fleet_test
