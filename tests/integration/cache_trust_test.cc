// The shared and local caches as an attacker meets them (issue 25, section 2), on Debian's
// docker-registry on loopback. The image's one layer holds a hardlink to nothing, which
// containerd refuses, so its honest audit fails. The attacker can push to the cache repository
// but holds no signing key: a scan of that layer without the hardlink, pushed unsigned or signed
// by another key, must not turn the FAIL into a signed PASS; neither may a scan signed by the
// trusted key but made under other options (a hash-only walk). A result signed by the trusted
// key is used (a second audit reads no layer). The local cache is refused, with one line naming
// it, when its directory is another user's or has a mode other than 0700, and there is no shared
// /tmp fallback when neither HOME nor XDG_CACHE_HOME is set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/layer_reader.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/util/dsse.h"
#include "kernodeck/version.h"
#include "local_registry.h"
#include "support.h"

namespace integration_cache_trust_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;

class CacheTrust : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl")) return;
    dir_ = new std::string(tempDir("cachetrust"));
    std::string k = *dir_ + "/";
    json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=trust\n"}},
                                {{"path", "app/main.py"}, {"content", "print(1)\n"}},
                                // containerd refuses a hardlink to nothing: the honest audit fails.
                                {{"path", "etc/evil"}, {"type", "hardlink"}, {"target", "does/not/exist"}}});
    mkimage({{"tag", "1.0"}, {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}}, k + "img");
    if (!reg_->push(k + "img", "1.0", "team/bad:1.0")) return;
    json index = json::parse(readFile(k + "img/index.json"));
    json m =
        json::parse(readFile(k + "img/blobs/sha256/" + index["manifests"][0]["digest"].get<std::string>().substr(7)));
    layer_ = new oci::Descriptor(*oci::parseDescriptor(m["layers"][0]));
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "sign.pem && openssl pkey -in " + k +
                 "sign.pem -pubout -out " + k + "sign.pub && openssl genpkey -algorithm EC -pkeyopt " +
                 "ec_paramgen_curve:P-256 -out " + k + "attacker.pem")
                 .code == 0;
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl or openssl unavailable";
  }

  static std::string image() { return reg_->host() + "/team/bad:1.0"; }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  static std::string repo(const std::string& name) { return reg_->host() + "/kernodeck/" + name; }
  static registry::Client client(const std::string& cacheRepo) {
    return registry::Client(*registry::parseReference(cacheRepo), registry::ClientOptions{.noCache = true});
  }
  static int layerGets() { return countRequests(reg_->log(), "GET", "/blobs/" + layer_->digest.str()); }

  // The attacker's scan: the honest walk of the layer (from a local cache an honest audit filled)
  // without the hardlink containerd refuses.
  static oci::LayerScan forgedScan() {
    std::string cache = tempDir("honest");
    run(K + " audit --cache-dir " + cache + " " + image());
    std::string file = run("ls " + cache + "/layers/sha256/" + layer_->digest.encoded + ".* | head -1").out;
    file.erase(file.find_last_not_of('\n') + 1);
    auto scan = oci::decodeScan(readFile(file), layer_->digest);
    EXPECT_TRUE(scan) << file;
    if (!scan) return {};
    std::vector<oci::LayerEntry> kept;
    for (auto& e : scan->entries)
      if (e.kind != oci::EntryKind::Hardlink) kept.push_back(std::move(e));
    EXPECT_EQ(kept.size() + 1, scan->entries.size());
    scan->entries = std::move(kept);
    scan->unsafe.clear();
    return *scan;
  }
  // The options an audit with --cache-repo walks the layer with.
  static oci::ScanOptions sharedOptions(std::shared_ptr<oci::SharedScanStore> store) {
    audit::AuditOptions ao;
    ao.sharedScans = std::move(store);
    return audit::layerWalkOptions(audit::layerScanOptions(ao), *layer_);
  }
  // Pushes `scan` to the cache repository as the old format did: the scan alone, no signature.
  static void pushUnsigned(const std::string& cacheRepo, const oci::LayerScan& scan) {
    auto c = client(cacheRepo);
    registry::Artifact a;
    a.artifactType = registry::kLayerScanArtifactType;
    a.blobs.push_back({registry::kLayerScanMediaType, oci::encodeScan(layer_->digest, scan)});
    a.annotations = {{"dev.kernodeck.layer", layer_->digest.str()},
                     {"dev.kernodeck.analysis-version", std::to_string(kAnalysisVersion)}};
    ASSERT_TRUE(registry::pushArtifact(c, a, registry::scanTag(layer_->digest)).ok());
  }
  // Pushes `scan` signed by the PEM key `signer` (made under `hashOnly` when asked).
  static void pushSigned(const std::string& cacheRepo, const oci::LayerScan& scan, const std::string& signer,
                         bool hashOnly = false) {
    auto k = util::Key::fromFile(signer);
    ASSERT_TRUE(k.ok()) << k.error().message;
    auto store = registry::openRegistryScanStore(cacheRepo, {.noCache = true}, {{&*k}, &*k});
    ASSERT_TRUE(store.ok());
    oci::ScanOptions so = sharedOptions(*store);
    so.hashOnly = hashOnly;
    (*store)->store(*layer_, so, scan);
    ASSERT_TRUE((*store)->has(*layer_, so));
  }
  // The reports attached to the image, checked with the signing key.
  static json reports() {
    RunResult r = run(K + " reports --no-cache --json --key " + key("sign.pub") + " " + image());
    return json::parse(r.out, nullptr, false);
  }
  static void expectNoVerifiedPass() {
    json rs = reports();
    ASSERT_TRUE(rs.is_object() && rs.contains("reports")) << rs.dump();
    for (const auto& r : rs["reports"])
      if (r.value("signature", "") == "verified") {
        EXPECT_NE(r.value("verdict", ""), "pass") << r.dump();
      }
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static oci::Descriptor* layer_;
  static bool ready_;
};

LocalRegistry* CacheTrust::reg_ = nullptr;
std::string* CacheTrust::dir_ = nullptr;
oci::Descriptor* CacheTrust::layer_ = nullptr;
bool CacheTrust::ready_ = false;

// The attack of issue 25 as it was run: an unsigned forged scan in the cache repository, then
// a signed, attached audit through it. The command line is one the old code took too (it then
// signed a PASS, exit 0).
TEST_F(CacheTrust, AnUnsignedForgedScanDoesNotMakeASignedPass) {
  int code = -1;
  json honest = auditJson("--no-cache " + image(), &code);
  ASSERT_EQ(code, 1);
  ASSERT_GE(countFindings(honest, "layer.path.unsafe"), 1);

  std::string cacheRepo = repo("cache-unsigned");
  pushUnsigned(cacheRepo, forgedScan());
  RunResult r = run(K + " audit --json --no-cache --cache-repo " + cacheRepo + " --attach --sign-key " +
                    key("sign.pem") + " " + image());
  EXPECT_EQ(r.code, 1) << r.err;
  json rep = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(rep.is_object()) << r.out << r.err;
  EXPECT_EQ(rep["summary"]["verdict"], "fail");
  EXPECT_GE(countFindings(rep, "layer.path.unsafe"), 1);
  ASSERT_EQ(countFindings(rep, "cache.shared.ignored"), 1) << rep["findings"].dump();
  for (const auto& f : rep["findings"])
    if (f["code"] == "cache.shared.ignored") {
      EXPECT_EQ(f["severity"], "info");
      EXPECT_NE(f["message"].get<std::string>().find(cacheRepo + ":" + registry::scanTag(layer_->digest)),
                std::string::npos)
          << f.dump();
      EXPECT_EQ(f["reason"], "not signed");
    }
  expectNoVerifiedPass();
}

// Signed, but by a key the reader does not trust; or by the trusted key but made under other
// options (a hash-only walk lists no file): ignored, the layer analysed again, still FAIL.
TEST_F(CacheTrust, AScanSignedByAnotherKeyOrUnderOtherOptionsIsIgnored) {
  oci::LayerScan forged = forgedScan();
  struct Case {
    std::string name, signer, reason;
    bool hashOnly;
  } cases[] = {{"cache-attacker", key("attacker.pem"), "its signature is not by a trusted key", false},
               {"cache-options", key("sign.pem"), "it was made with other options", true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string cacheRepo = repo(c.name);
    pushSigned(cacheRepo, forged, c.signer, c.hashOnly);
    int before = layerGets();
    RunResult r = run(K + " audit --json --no-cache --cache-repo " + cacheRepo + " --cache-key " + key("sign.pub") +
                      " --attach --sign-key " + key("sign.pem") + " " + image());
    EXPECT_EQ(r.code, 1) << r.err;
    json rep = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(rep.is_object()) << r.out << r.err;
    EXPECT_EQ(rep["summary"]["verdict"], "fail");
    EXPECT_GE(countFindings(rep, "layer.path.unsafe"), 1);
    EXPECT_EQ(layerGets(), before + 1);  // analysed here
    ASSERT_EQ(countFindings(rep, "cache.shared.ignored"), 1);
    for (const auto& f : rep["findings"])
      if (f["code"] == "cache.shared.ignored") {
        EXPECT_EQ(f["reason"].get<std::string>().rfind(c.reason, 0), 0u) << f.dump();
      }
    expectNoVerifiedPass();
  }
}

// The audit above signed and shared its own walk: a reader trusting that key (by its public
// half alone) uses it and reads no layer, and still fails the image.
TEST_F(CacheTrust, AResultSignedByATrustedKeyIsUsed) {
  std::string cacheRepo = repo("cache-good");
  pushUnsigned(cacheRepo, forgedScan());
  RunResult first =
      run(K + " audit --no-cache --cache-repo " + cacheRepo + " --sign-key " + key("sign.pem") + " " + image());
  EXPECT_EQ(first.code, 1) << first.err;
  int before = layerGets();
  int code = -1;
  json again = auditJson("--cache-dir " + tempDir("fresh") + " --cache-repo " + cacheRepo + " --cache-key " +
                             key("sign.pub") + " " + image(),
                         &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(layerGets(), before);  // the shared result was used
  EXPECT_EQ(countFindings(again, "cache.shared.ignored"), 0);
  EXPECT_GE(countFindings(again, "layer.path.unsafe"), 1);
  // Without a trusted key, --cache-repo is a usage error rather than a cache that never counts.
  EXPECT_EQ(run(K + " audit --no-cache --cache-repo " + cacheRepo + " " + image()).code, 2);
}

// A planted entry in the local cache: the scan without the hardlink written over the honest
// one (and the whole-analysis result removed, so the layer entry is read). The old code read it
// and passed; a directory that is not the user's own with mode 0700 is refused instead.
TEST_F(CacheTrust, APlantedLocalEntryInADirectoryOthersCanWriteIsRefused) {
  std::string forged = oci::encodeScan(layer_->digest, forgedScan());
  for (const char* how : {"chmod 755", "chown 4242"}) {
    SCOPED_TRACE(how);
    if (std::string(how).starts_with("chown") && ::geteuid() != 0) continue;  // giving a file away needs root
    std::string cache = tempDir("planted");
    int code = -1;
    auditJson("--cache-dir " + cache + " " + image(), &code);
    ASSERT_EQ(code, 1);
    std::string files = run("ls " + cache + "/layers/sha256/" + layer_->digest.encoded + ".*").out;
    ASSERT_FALSE(files.empty());
    for (size_t p = 0, nl; (nl = files.find('\n', p)) != std::string::npos; p = nl + 1)
      writeFile(files.substr(p, nl - p), forged);
    ASSERT_EQ(run("rm -rf " + cache + "/results && " + how + " " + cache).code, 0);
    RunResult r = run(K + " audit " + "--cache-dir " + cache + " " + image());
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("cache directory " + cache), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string(how) == "chmod 755" ? "mode 0755" : "owned by uid 4242"), std::string::npos)
        << r.err;
  }
  // A directory Kernodeck makes itself is 0700.
  std::string made = tempDir("made") + "/sub/cache";
  int code = -1;
  auditJson("--cache-dir " + made + " " + image(), &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(run("stat -c %a " + made).out, "700\n");
}

// Neither HOME nor XDG_CACHE_HOME: no shared /tmp directory is used; --cache-dir or --no-cache is asked for.
TEST_F(CacheTrust, NoSharedTmpFallback) {
  RunResult r = run("env -u HOME -u XDG_CACHE_HOME " + K + " audit " + image());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("no cache directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--cache-dir"), std::string::npos) << r.err;
  EXPECT_EQ(run("env -u HOME -u XDG_CACHE_HOME " + K + " audit --no-cache " + image()).code, 1);
  // A relative XDG_CACHE_HOME is ignored (the XDG spec), so nothing is written beside the working
  // directory: run in a folder of its own (an older binary wrote relative/kernodeck/ into the
  // checkout this way), which stays empty.
  std::string cwd = tempDir("relative-xdg");
  EXPECT_EQ(run("cd " + cwd + " && env -u HOME XDG_CACHE_HOME=relative " + K + " audit " + image()).code, 3);
  EXPECT_FALSE(lexists(cwd + "/relative")) << run("find " + cwd).out;
}

}  // namespace

}  // namespace integration_cache_trust_test
