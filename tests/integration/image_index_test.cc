// Image indexes as containerd reads them (issue 30): an index nested inside an index, entries
// without a platform, and images with an empty `layers` array, from every source kind. Each
// layout is built by kdk-mkimage and rewritten by hand (no tool here writes a nested index or
// strips an entry's platform), and each verdict is compared with containerd's own on the same
// bytes: a private containerd 1.6 (Debian's, CRI off) imports the layout as an OCI archive with
// `ctr images import --platform linux/amd64`, which unpacks the manifest images.Manifest chooses,
// the one a container of that image would run; its snapshots name the layers it unpacked.
#include <gtest/gtest.h>
#include <unistd.h>

#include "kernodeck/util/hash.h"
#include "local_registry.h"
#include "support.h"

namespace integration_image_index_test {

using nlohmann::json;
using namespace kdktest;
using kernodeck::util::sha256Hex;

namespace {

const std::string K = KERNODECK_BIN;

// One single-layer image per architecture, its os-release naming it: kdk-<arch>.
json platformSpec(const std::string& arch) {
  return {{"architecture", arch},
          {"config", {{"Env", {"PATH=/bin"}}}},
          {"layers",
           json::array(
               {{{"compression", "gzip"},
                 {"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=kdk-" + arch + "\n"}}})}}})}};
}

// A layout of an amd64 and an arm64 image (kdk-mkimage's index) whose documents a case rewrites.
struct Layout {
  std::string dir;
  std::vector<json> platforms;  // the platform manifests kdk-mkimage wrote, amd64 first

  std::string blob(const std::string& digest) const { return dir + "/blobs/sha256/" + digest.substr(7); }
  json doc(const std::string& digest) const { return json::parse(readFile(blob(digest))); }
  json index() const { return json::parse(readFile(dir + "/index.json")); }
  // Stores a document; its descriptor, with `platform` when given.
  json put(const json& d, const std::string& mediaType, const json& platform = nullptr) const {
    std::string bytes = d.dump();
    std::string digest = "sha256:" + sha256Hex(bytes);
    writeFile(blob(digest), bytes);
    json desc = {{"mediaType", mediaType}, {"digest", digest}, {"size", bytes.size()}};
    if (!platform.is_null()) desc["platform"] = platform;
    return desc;
  }
  json indexOf(const std::vector<json>& entries) const {
    json list = json::array();
    for (const auto& e : entries) list.push_back(e);
    return put({{"schemaVersion", 2}, {"mediaType", "application/vnd.oci.image.index.v1+json"}, {"manifests", list}},
               "application/vnd.oci.image.index.v1+json");
  }
  // index.json names `top` as the image "1.0".
  void setTop(json top) const {
    top["annotations"] = {{"org.opencontainers.image.ref.name", "1.0"}};
    writeFile(dir + "/index.json", json({{"schemaVersion", 2}, {"manifests", json::array({top})}}).dump());
  }
  // The DiffID of a platform manifest's only layer.
  std::string diffId(const json& entry) const {
    return doc(doc(entry["digest"])["config"]["digest"])["rootfs"]["diff_ids"][0];
  }
  std::string archive() const {
    std::string out = dir + ".tar";
    EXPECT_EQ(run("tar -C " + dir + " -cf " + out + " .").code, 0);
    return out;
  }
};

Layout twoPlatforms(const std::string& tag) {
  Layout l{tempDir(tag) + "/img"};
  EXPECT_FALSE(mkimage({{"tag", "1.0"}, {"platforms", {platformSpec("amd64"), platformSpec("arm64")}}}, l.dir).empty());
  json index = l.doc(l.index()["manifests"][0]["digest"]);
  for (const auto& e : index["manifests"]) l.platforms.push_back(e);
  return l;
}

// A private containerd 1.6 for the suite: its own root, state and socket, CRI off.
class Containerd {
 public:
  bool start() {
    if (::geteuid() != 0 || !haveTool("containerd") || !haveTool("ctr")) return false;
    d_ = tempDir("ctd");
    writeFile(d_ + "/config.toml", "version = 2\nroot = \"" + d_ + "/root\"\nstate = \"" + d_ + "/state\"\n" +
                                       "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = \"" +
                                       d_ + "/containerd.sock\"\n");
    run("cd " + d_ + " && (containerd --config config.toml > containerd.log 2>&1 < /dev/null & echo $! > pid)");
    for (int i = 0; i < 100; ++i) {
      if (run(ctr("") + " version >/dev/null 2>&1").code == 0) return up_ = true;
      ::usleep(100000);
    }
    return false;
  }
  ~Containerd() {
    if (!d_.empty()) run("kill $(cat " + d_ + "/pid) 2>/dev/null; sleep 0.2");
  }
  // `ctr images import --platform linux/amd64` of an OCI archive into a fresh namespace; on
  // success, `out` holds the snapshots it unpacked (a one-layer image's is its DiffID).
  RunResult import(const std::string& archive) {
    std::string ns = "kdk" + std::to_string(n_++);
    RunResult r = run("timeout 60 " + ctr(ns) + " images import --platform linux/amd64 --snapshotter native " +
                      archive + " < /dev/null");
    if (r.code == 0) r.out = run(ctr(ns) + " snapshots --snapshotter native ls").out;
    return r;
  }

 private:
  std::string ctr(const std::string& ns) const {
    return "ctr --address " + d_ + "/containerd.sock" + (ns.empty() ? "" : " -n " + ns);
  }
  std::string d_;
  bool up_ = false;
  int n_ = 0;
};

}  // namespace

// index.json -> index -> index -> manifests: the amd64 image, as containerd unpacks it, with
// the chain of both indexes in the subject; a chain deeper than the bound and a cycle are
// refused, each named.
TEST(ImageIndexes, NestedIndexIsFollowedAsContainerdDoes) {
  Layout l = twoPlatforms("nested");
  json inner = l.index()["manifests"][0];
  inner.erase("annotations");
  json outer = l.indexOf({inner});
  l.setTop(outer);
  int code = -1;
  json r = auditJson("--platform linux/amd64 oci:" + l.dir + ":1.0", &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "kdk-amd64");
  EXPECT_EQ(r["subject"]["index_digest"], outer["digest"]);
  EXPECT_EQ(r["subject"]["index_chain"], json::array({outer["digest"], inner["digest"]}));
  EXPECT_EQ(r["subject"]["manifest_digest"], l.platforms[0]["digest"]);
  EXPECT_EQ(r["subject"]["platform"], "linux/amd64");
  json arm = auditJson("--platform linux/arm64 oci-archive:" + l.archive(), &code);
  EXPECT_EQ(code, 0) << arm.dump(1);
  EXPECT_EQ(arm["os"]["id"], "kdk-arm64");

  Containerd ctd;
  if (ctd.start()) {
    RunResult c = ctd.import(l.archive());
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.out.find(l.diffId(l.platforms[0])), std::string::npos) << c.out;
    EXPECT_EQ(c.out.find(l.diffId(l.platforms[1])), std::string::npos) << c.out;
  } else {
    std::cerr << "containerd comparison skipped: needs root, containerd and ctr\n";
  }

  // Five indexes deep: past the bound, named with the chain.
  json deep = inner;
  for (int i = 0; i < 4; ++i) deep = l.indexOf({deep});
  l.setTop(deep);
  RunResult d = run(K + " audit --platform linux/amd64 oci:" + l.dir + ":1.0");
  EXPECT_EQ(d.code, 3) << d.out << d.err;
  EXPECT_NE(d.err.find("nest deeper than 4"), std::string::npos) << d.err;
  EXPECT_NE(d.err.find(deep["digest"].get<std::string>() + " -> "), std::string::npos) << d.err;

  // A cycle: an entry naming a blob whose bytes are the index holding it. The digest does not
  // match (a finding), and the walk stops at the repeated digest, named.
  std::string loopDigest = "sha256:" + std::string(64, 'c');
  json loop = {{"mediaType", "application/vnd.oci.image.index.v1+json"}, {"digest", loopDigest}, {"size", 1}};
  json holder = l.indexOf({loop});
  writeFile(l.blob(loopDigest), readFile(l.blob(holder["digest"])));
  l.setTop(holder);
  RunResult cyc = run(K + " audit --platform linux/amd64 oci:" + l.dir + ":1.0");
  EXPECT_EQ(cyc.code, 3) << cyc.out << cyc.err;
  EXPECT_NE(cyc.err.find("image index " + loopDigest + " lists itself"), std::string::npos) << cyc.err;
}

// Entries without a platform: the first is followed and known by its config, as containerd
// does; when its config is another platform, containerd tries no other entry and refuses the
// image, and so does the audit (exit 3, naming the entry and the config's platform). An entry
// that names the platform wins over those without.
TEST(ImageIndexes, EntriesWithoutAPlatformAreKnownByTheirConfig) {
  Layout l = twoPlatforms("noplatform");
  std::vector<json> e = l.platforms;
  json amd = e[0], arm = e[1];
  amd.erase("platform");
  arm.erase("platform");
  Containerd ctd;
  bool compare = ctd.start();
  if (!compare) std::cerr << "containerd comparison skipped: needs root, containerd and ctr\n";

  l.setTop(l.indexOf({amd, arm}));
  int code = -1;
  json r = auditJson("--platform linux/amd64 oci:" + l.dir + ":1.0", &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "kdk-amd64");
  EXPECT_EQ(r["subject"]["platform"], "linux/amd64");
  ASSERT_EQ(countFindings(r, "index.platform.missing"), 1) << r.dump(1);
  for (const auto& f : r["findings"])
    if (f["code"] == "index.platform.missing") {
      EXPECT_EQ(f["platform_from"], "config");
      EXPECT_EQ(f["digest"], amd["digest"]);
    }
  if (compare) {
    RunResult c = ctd.import(l.archive());
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.out.find(l.diffId(e[0])), std::string::npos) << c.out;
  }

  l.setTop(l.indexOf({arm, amd}));
  RunResult refused = run(K + " audit --platform linux/amd64 oci:" + l.dir + ":1.0");
  EXPECT_EQ(refused.code, 3) << refused.out << refused.err;
  EXPECT_NE(refused.err.find(arm["digest"].get<std::string>() + ", has a config for linux/arm64"), std::string::npos)
      << refused.err;
  if (compare) {
    RunResult c = ctd.import(l.archive());
    EXPECT_NE(c.code, 0) << c.out;
    EXPECT_NE(c.err.find("no match for platform"), std::string::npos) << c.err;
  }

  // Mixed: arm64 without a platform first, amd64 naming its platform after it.
  l.setTop(l.indexOf({arm, e[0]}));
  json mixed = auditJson("--platform linux/amd64 oci:" + l.dir + ":1.0", &code);
  EXPECT_EQ(code, 0) << mixed.dump(1);
  EXPECT_EQ(mixed["os"]["id"], "kdk-amd64");
  EXPECT_EQ(countFindings(mixed, "index.platform.missing"), 0);
  if (compare) {
    RunResult c = ctd.import(l.archive());
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.out.find(l.diffId(e[0])), std::string::npos) << c.out;
  }
}

// An OCI manifest with an empty `layers` array (a FROM scratch image with only metadata) from an
// OCI layout, an oci-archive and a registry (pushed by skopeo): audited, with image.layers.empty,
// as containerd imports it. ImageFormats.ZeroLayerImagesAreAudited covers docker-archive and dir:.
TEST(ImageIndexes, EmptyLayersFromLayoutArchiveAndRegistry) {
  Layout l{tempDir("empty-layers") + "/img"};
  ASSERT_FALSE(
      mkimage({{"tag", "1.0"}, {"config", {{"Env", {"PATH=/bin"}}}}, {"layers", json::array()}}, l.dir).empty());
  ASSERT_EQ(l.doc(l.index()["manifests"][0]["digest"])["layers"], json::array());
  std::vector<std::string> refs = {"oci:" + l.dir + ":1.0", "oci-archive:" + l.archive()};
  LocalRegistry reg;
  if (reg.start() && reg.push(l.dir, "1.0", "team/empty:1")) {
    refs.push_back(reg.host() + "/team/empty:1");
  } else {
    ADD_FAILURE() << "docker-registry, skopeo or curl unavailable: the registry case did not run";
  }
  for (const auto& ref : refs) {
    int code = -1;
    json r = auditJson("--no-cache " + ref, &code);
    ASSERT_TRUE(r.is_object()) << ref;
    EXPECT_EQ(code, 0) << ref << r.dump(1);
    EXPECT_EQ(countFindings(r, "image.layers.empty"), 1) << ref << r.dump(1);
    EXPECT_EQ(stepStatus(r, "layers"), "passed") << ref;
    EXPECT_EQ(r["layers"].size(), 0u) << ref;
    for (const auto& f : r["findings"]) {
      if (f["code"] != "image.tag.mutable") {
        EXPECT_EQ(f["severity"], "info") << ref << f.dump();
      }
    }
  }
  Containerd ctd;
  if (ctd.start()) {
    RunResult c = ctd.import(l.archive());
    EXPECT_EQ(c.code, 0) << c.err;
  }
}

// A registry index whose entry is an index (pushed by skopeo, the outer index put by curl): the
// audit follows it to the platform manifest and names both indexes.
TEST(ImageIndexes, RegistryIndexWhoseEntryIsAnIndex) {
  Layout l = twoPlatforms("reg-nested");
  LocalRegistry reg;
  if (!reg.start()) GTEST_SKIP() << "docker-registry, skopeo or curl unavailable";
  ASSERT_EQ(run("skopeo copy -q --all --dest-tls-verify=false oci:" + l.dir + ":1.0 docker://" + reg.host() +
                "/team/nested:inner")
                .code,
            0);
  std::string inner = reg.digestOf("team/nested:inner");
  ASSERT_FALSE(inner.empty());
  std::string raw = run("skopeo inspect --raw --tls-verify=false docker://" + reg.host() + "/team/nested:inner").out;
  ASSERT_EQ("sha256:" + sha256Hex(raw), inner);
  json innerDesc = {{"mediaType", "application/vnd.oci.image.index.v1+json"}, {"digest", inner}, {"size", raw.size()}};
  std::string outer = json({{"schemaVersion", 2},
                            {"mediaType", "application/vnd.oci.image.index.v1+json"},
                            {"manifests", json::array({innerDesc})}})
                          .dump();
  std::string file = tempDir("reg-outer") + "/outer.json";
  writeFile(file, outer);
  RunResult put = run("curl -sf -X PUT -H 'Content-Type: application/vnd.oci.image.index.v1+json' --data-binary @" +
                      file + " http://" + reg.host() + "/v2/team/nested/manifests/1.0");
  ASSERT_EQ(put.code, 0) << put.out << put.err;
  int code = -1;
  json r = auditJson("--no-cache --platform linux/arm64 " + reg.host() + "/team/nested:1.0", &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "kdk-arm64");
  EXPECT_EQ(r["subject"]["index_chain"], json::array({"sha256:" + sha256Hex(outer), inner}));
  EXPECT_EQ(r["subject"]["index_digest"], "sha256:" + sha256Hex(outer));
}

// A docker-archive that also holds an OCI layout (as docker 25+ writes) whose index.json names a
// nested index: the manifest of the image manifest.json chooses is found through both indexes and
// read as it is, with its digest, not synthesised.
TEST(ImageIndexes, DockerArchiveLayoutWithANestedIndex) {
  Layout l = twoPlatforms("docker-nested");
  json inner = l.index()["manifests"][0];
  inner.erase("annotations");
  l.setTop(l.indexOf({l.indexOf({inner})}));
  json m = l.doc(l.platforms[0]["digest"]);
  auto path = [](const json& d) { return "blobs/sha256/" + d["digest"].get<std::string>().substr(7); };
  writeFile(l.dir + "/manifest.json", json::array({{{"Config", path(m["config"])},
                                                    {"RepoTags", json::array({"team/app:1"})},
                                                    {"Layers", json::array({path(m["layers"][0])})}}})
                                          .dump());
  int code = -1;
  json r = auditJson("docker-archive:" + l.archive(), &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "kdk-amd64");
  EXPECT_EQ(r["subject"]["manifest_digest"], l.platforms[0]["digest"]) << r["subject"].dump();
}

}  // namespace integration_image_index_test
