// Images as the other tools write them, made in the test by the tools themselves (umoci,
// skopeo, podman) or laid out as go-containerregistry's tarball writes them, and the layout
// cases of the image spec: one malformed index entry, duplicate names, platform-less
// entries, digests Kernodeck cannot verify, artifacts, encrypted layers, and documents the
// image-spec schemas reject.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>

#include "kernodeck/util/hash.h"
#include "no_host_hooks.h"
#include "support.h"

namespace integration_image_formats_test {

using nlohmann::json;
using namespace kdktest;
using kernodeck::util::sha256Hex;

namespace {

const std::string K = KERNODECK_BIN;

json spec(const std::string& osId = "kdk", const std::string& compression = "gzip") {
  return {
      {"tag", "1.0"},
      {"config", {{"Env", {"PATH=/bin"}}}},
      {"layers", json::array({{{"compression", compression},
                               {"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=" + osId + "\n"}},
                                                        {{"path", "bin/tool"}, {"content", "tool v1"}}})}}})}};
}

// Every finding is at most info: what a clean image from a real tool must give.
void expectClean(const json& r, int code, const std::string& what) {
  ASSERT_TRUE(r.is_object()) << what;
  EXPECT_EQ(code, 0) << what << r.dump(1);
  for (const auto& f : r["findings"]) EXPECT_EQ(f["severity"], "info") << what << ": " << f.dump();
}

// An OCI layout built by kdk-mkimage whose documents a case rewrites, keeping every digest right.
struct Layout {
  std::string dir;

  json index() const { return json::parse(readFile(dir + "/index.json")); }
  std::string blob(const std::string& digest) const { return dir + "/blobs/sha256/" + digest.substr(7); }
  json manifest() const { return json::parse(readFile(blob(index()["manifests"][0]["digest"]))); }
  json config() const { return json::parse(readFile(blob(manifest()["config"]["digest"]))); }
  std::string put(const std::string& bytes) const {
    std::string d = "sha256:" + sha256Hex(bytes);
    writeFile(blob(d), bytes);
    return d;
  }
  void setIndex(const json& ix) const { writeFile(dir + "/index.json", ix.dump()); }
  // Writes a manifest and points index.json's first entry at it.
  std::string setManifest(const json& m) const {
    std::string bytes = m.dump();
    json ix = index();
    ix["manifests"][0]["digest"] = put(bytes);
    ix["manifests"][0]["size"] = bytes.size();
    setIndex(ix);
    return ix["manifests"][0]["digest"];
  }
  void setConfig(const json& c) const {
    std::string bytes = c.dump();
    json m = manifest();
    m["config"]["digest"] = put(bytes);
    m["config"]["size"] = bytes.size();
    setManifest(m);
  }
};

Layout makeLayout(const std::string& tag, const json& s = spec()) {
  Layout l{tempDir(tag) + "/img"};
  EXPECT_FALSE(mkimage(s, l.dir).empty());
  return l;
}

// A go-containerregistry tarball (tarball.Write): manifest.json, the config named
// "sha256:<hex>", each layer "<hex>.tar.gz" as its compressed blob.
std::string ggcrTarball(const Layout& l, const std::string& out, const std::vector<std::string>& tags) {
  json m = l.manifest();
  std::string stage = out + ".d";
  ::mkdir(stage.c_str(), 0755);
  std::string cfg = m["config"]["digest"];
  writeFile(stage + "/" + cfg, readFile(l.blob(cfg)));
  json layers = json::array();
  for (const auto& d : m["layers"]) {
    std::string name = d["digest"].get<std::string>().substr(7) + ".tar.gz";
    writeFile(stage + "/" + name, readFile(l.blob(d["digest"])));
    layers.push_back(name);
  }
  writeFile(stage + "/manifest.json", json::array({{{"Config", cfg}, {"RepoTags", tags}, {"Layers", layers}}}).dump());
  EXPECT_EQ(run("tar -C " + stage + " -cf " + out + " .").code, 0);
  return out;
}

std::string containersConf(const std::string& base) {
  writeFile(base + "/containers.conf", "[containers]\ndefault_ulimits = [\"nofile=4096:4096\"]\n[engine]\n" + noHostHooks());
  return "CONTAINERS_CONF=" + base + "/containers.conf podman --root " + base + "/storage --runroot " + base +
         "/run --storage-driver vfs ";
}

}  // namespace

// umoci builds (repack writes a '/' entry), skopeo copies to each of its transports; every copy
// audits clean, with the same content, and `dir:` is skopeo's directory format.
TEST(ImageFormats, UmociAndSkopeoCopiesAuditClean) {
  for (const char* tool : {"umoci", "skopeo", "busybox"})
    if (!haveTool(tool)) GTEST_SKIP() << tool << " is not installed (scripts/deps --test installs it)";
  std::string base = tempDir("tools");
  std::string L = base + "/L", B = base + "/B";
  RunResult b =
      run("set -e; " + umociBusyboxCommands(L, B) + "; printf 'extra\\n' > " + base + "/extra; umoci insert --image " +
          L + ":base " + base + "/extra /etc/extra" + "; skopeo copy -q oci:" + L + ":base dir:" + base + "/D" +
          "; skopeo copy -q oci:" + L + ":base oci:" + base + "/O:base" + "; skopeo copy -q oci:" + L +
          ":base oci-archive:" + base + "/a.tar:base" + "; skopeo copy -q oci:" + L + ":base docker-archive:" + base +
          "/d.tar:team/app:1.0");
  ASSERT_EQ(b.code, 0) << b.err;
  std::string top = json::parse(readFile(L + "/index.json"))["manifests"][0]["digest"];
  std::string dirTop = "sha256:" + sha256Hex(readFile(base + "/D/manifest.json"));
  std::vector<std::string> refs = {"oci:" + L + "@" + top,
                                   "dir:" + base + "/D",
                                   "oci-archive:" + base + "/a.tar",
                                   "docker-archive:" + base + "/d.tar",
                                   "docker-archive:" + base + "/d.tar:@0",
                                   base + "/D"};
  std::string diffId;
  for (const auto& ref : refs) {
    int code = -1;
    json r = auditJson(ref, &code);
    expectClean(r, code, ref);
    EXPECT_EQ(r["os"]["id"], "umocitest") << ref;
    ASSERT_GE(r["layers"].size(), 2u) << ref;
    std::string last = r["layers"][r["layers"].size() - 2]["diff_id"];
    if (diffId.empty()) diffId = last;
    EXPECT_EQ(last, diffId) << ref;  // the same content whatever the transport
  }
  json d = auditJson("dir:" + base + "/D");
  EXPECT_EQ(d["subject"]["transport"], "dir");
  EXPECT_EQ(d["subject"]["manifest_digest"], dirTop);
  // A bare path is read by what it holds, and says so.
  json bare = auditJson(base + "/D");
  EXPECT_EQ(bare["subject"]["transport"], "dir");
  EXPECT_EQ(countFindings(bare, "reference.transport"), 1);
  // A root filesystem under dir: is read, with a note naming rootfs:.
  ASSERT_EQ(run(umociUnpack() + " --image " + L + ":base " + base + "/U >/dev/null").code, 0);
  int code = -1;
  json fs = auditJson("dir:" + base + "/U/rootfs", &code);
  expectClean(fs, code, "dir: rootfs");
  EXPECT_EQ(fs["subject"]["transport"], "rootfs");
  EXPECT_EQ(fs["os"]["id"], "umocitest");
  ASSERT_EQ(countFindings(fs, "reference.transport"), 1);
  json rootfs = auditJson("rootfs:" + base + "/U/rootfs", &code);
  expectClean(rootfs, code, "rootfs:");
  EXPECT_EQ(countFindings(rootfs, "reference.transport"), 0);
  // A bare path that is nothing Kernodeck reads: the error names the transports.
  RunResult none = run(K + " audit " + base + "/nothing-here");
  EXPECT_EQ(none.code, 3);
  EXPECT_NE(none.err.find("oci:DIR"), std::string::npos) << none.err;
}

// podman save, in both formats, of an image podman loaded from a skopeo docker-archive.
TEST(ImageFormats, PodmanSaveBothFormatsAuditClean) {
  for (const char* tool : {"podman", "skopeo"})
    if (!haveTool(tool)) GTEST_SKIP() << tool << " is not installed";
  std::string base = tempDir("podman");
  Layout l{base + "/img"};
  ASSERT_FALSE(mkimage(spec("podmantest"), l.dir).empty());
  std::string P = containersConf(base);
  RunResult b = run("set -e; skopeo copy -q oci:" + l.dir + ":1.0 docker-archive:" + base + "/in.tar:team/app:1.0; " +
                    P + "load -q -i " + base + "/in.tar >/dev/null; " + P + "save -q --format oci-archive -o " + base +
                    "/p-oci.tar team/app:1.0; " + P + "save -q --format docker-archive -o " + base +
                    "/p-docker.tar team/app:1.0");
  ASSERT_EQ(b.code, 0) << b.err;
  for (const std::string& ref : {"oci-archive:" + base + "/p-oci.tar", "docker-archive:" + base + "/p-docker.tar"}) {
    int code = -1;
    json r = auditJson(ref, &code);
    expectClean(r, code, ref);
    EXPECT_EQ(r["os"]["id"], "podmantest") << ref;
  }
}

// go-containerregistry's tarball: gzip (and zstd) layers named by their compressed digest, the
// config named "sha256:<hex>": verified by DiffID after inflating, the config by its bytes.
TEST(ImageFormats, GgcrTarballWithCompressedLayers) {
  for (const char* comp : {"gzip", "zstd"}) {
    Layout l = makeLayout(std::string("ggcr-") + comp, spec("ggcr", comp));
    std::string tar = ggcrTarball(l, l.dir + "/../t.tar", {"ggcr/app:1"});
    int code = -1;
    json r = auditJson("docker-archive:" + tar, &code);
    expectClean(r, code, comp);
    EXPECT_EQ(r["os"]["id"], "ggcr");
    EXPECT_EQ(r["layers"][0]["compression"], comp);
    EXPECT_TRUE(r["subject"]["manifest_digest"].is_null());
    EXPECT_EQ(r["image"]["config_digest"], l.manifest()["config"]["digest"]);
  }
  // A tampered layer is still found, by its DiffID.
  Layout l = makeLayout("ggcr-bad", spec("ggcr", "none"));
  json m = l.manifest();
  std::string lf = l.blob(m["layers"][0]["digest"]);
  std::string bytes = readFile(lf);
  bytes[bytes.find("tool v1") + 5] = '9';
  writeFile(lf, bytes);
  int code = -1;
  json bad = auditJson("docker-archive:" + ggcrTarball(l, l.dir + "/../bad.tar", {"ggcr/app:1"}), &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(bad, "blob.digest.mismatch"), 1) << bad.dump(1);
}

// skopeo's docker-archive:FILE:@N picks the Nth image of manifest.json.
TEST(ImageFormats, DockerArchiveSourceIndex) {
  Layout a = makeLayout("idx-a", spec("first")), b = makeLayout("idx-b", spec("second"));
  std::string stage = tempDir("idx") + "/s";
  ::mkdir(stage.c_str(), 0755);
  json entries = json::array();
  for (const Layout* l : {&a, &b}) {
    json m = l->manifest();
    std::string cfg = m["config"]["digest"].get<std::string>().substr(7) + ".json";
    writeFile(stage + "/" + cfg, readFile(l->blob(m["config"]["digest"])));
    std::string layer = m["layers"][0]["digest"].get<std::string>().substr(7) + "/layer.tar";
    ::mkdir((stage + "/" + layer.substr(0, 64)).c_str(), 0755);
    writeFile(stage + "/" + layer, readFile(l->blob(m["layers"][0]["digest"])));
    entries.push_back({{"Config", cfg}, {"RepoTags", json::array()}, {"Layers", {layer}}});
  }
  writeFile(stage + "/manifest.json", entries.dump());
  std::string tar = stage + "/../two.tar";
  ASSERT_EQ(run("tar -C " + stage + " -cf " + tar + " .").code, 0);
  int code = -1;
  EXPECT_EQ(auditJson("docker-archive:" + tar + ":@0", &code)["os"]["id"], "first");
  EXPECT_EQ(auditJson("docker-archive:" + tar + ":@1", &code)["os"]["id"], "second");
  RunResult out = run(K + " audit docker-archive:" + tar + ":@2");
  EXPECT_EQ(out.code, 3);
  EXPECT_NE(out.err.find("@2"), std::string::npos) << out.err;
  RunResult none = run(K + " audit docker-archive:" + tar);
  EXPECT_EQ(none.code, 3);
  EXPECT_NE(none.err.find(":@N"), std::string::npos) << none.err;
}

// index.json: a malformed entry concerns only its image; a name listed twice with one digest
// is one image; an entry without a platform is chosen and said so.
TEST(ImageFormats, LayoutIndexEntries) {
  Layout l = makeLayout("index");
  json ix = l.index();
  json good = ix["manifests"][0];
  json broken = {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                 {"digest", "sha256:zz"},
                 {"size", 1},
                 {"annotations", {{"org.opencontainers.image.ref.name", "broken"}}}};
  ix["manifests"] = json::array({good, broken, good});
  l.setIndex(ix);
  int code = -1;
  json r = auditJson("oci:" + l.dir + ":1.0", &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["findings"].size(), 1u) << r.dump(1);  // the tag's warning only
  EXPECT_EQ(r["os"]["id"], "kdk");
  RunResult bad = run(K + " audit oci:" + l.dir + ":broken");
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.err.find("manifests[1] ('broken')"), std::string::npos) << bad.err;

  // An image index whose only entry names no platform, even with --platform.
  Layout p = makeLayout("noplatform");
  json inner = p.index()["manifests"][0];
  inner.erase("annotations");
  inner.erase("platform");
  json nested = {
      {"schemaVersion", 2}, {"mediaType", "application/vnd.oci.image.index.v1+json"}, {"manifests", {inner}}};
  std::string nb = nested.dump();
  json top = {{"mediaType", "application/vnd.oci.image.index.v1+json"}, {"digest", p.put(nb)}, {"size", nb.size()}};
  p.setIndex({{"schemaVersion", 2}, {"manifests", {top}}});
  json np = auditJson("--platform linux/amd64 oci:" + p.dir + "@" + top["digest"].get<std::string>(), &code);
  expectClean(np, code, "platform-less");
  EXPECT_EQ(countFindings(np, "index.platform.missing"), 1);
  EXPECT_EQ(np["subject"]["platform"], "linux/amd64");
}

// blob.digest.unverifiable for an algorithm other than sha256/sha512, at every level.
TEST(ImageFormats, UnverifiableDigestsAtEveryLevel) {
  // The blob a descriptor names, copied under another algorithm's directory and renamed.
  auto rename = [](const Layout& l, json& desc, const std::string& alg) {
    std::string enc = desc["digest"].get<std::string>().substr(7);
    ::mkdir((l.dir + "/blobs/" + alg).c_str(), 0755);
    writeFile(l.dir + "/blobs/" + alg + "/" + enc, readFile(l.blob(desc["digest"])));
    desc["digest"] = alg + ":" + enc;
  };
  struct Case {
    const char* name;
    std::function<void(const Layout&)> mutate;
  } cases[] = {
      {"layer",
       [&](const Layout& l) {
         json m = l.manifest();
         rename(l, m["layers"][0], "sha384");
         l.setManifest(m);
       }},
      {"config",
       [&](const Layout& l) {
         json m = l.manifest();
         rename(l, m["config"], "multihash+base58");
         l.setManifest(m);
       }},
      {"manifest",
       [&](const Layout& l) {
         json ix = l.index();
         rename(l, ix["manifests"][0], "sha384");
         l.setIndex(ix);
       }},
      {"diff_id",
       [](const Layout& l) {
         json c = l.config();
         c["rootfs"]["diff_ids"][0] = "sha384:" + c["rootfs"]["diff_ids"][0].get<std::string>().substr(7);
         l.setConfig(c);
       }},
  };
  for (const auto& c : cases) {
    Layout l = makeLayout(std::string("unverifiable-") + c.name);
    c.mutate(l);
    int code = -1;
    json r = auditJson("oci:" + l.dir + ":1.0", &code);
    ASSERT_TRUE(r.is_object()) << c.name;
    EXPECT_EQ(countFindings(r, "blob.digest.unverifiable"), 1) << c.name << r.dump(1);
    EXPECT_EQ(countFindings(r, "blob.missing"), 0) << c.name << r.dump(1);
    EXPECT_EQ(code, 1) << c.name;
  }
}

// A zero-layer image (FROM scratch with only metadata) as skopeo and podman write it: a
// docker-archive with "Layers": [] and skopeo's dir: with a Docker v2s2 manifest whose layers
// array is empty. containerd and podman load both; the audit runs, with an info finding (issue 30).
TEST(ImageFormats, ZeroLayerImagesAreAudited) {
  for (const char* tool : {"podman", "skopeo"})
    if (!haveTool(tool)) GTEST_SKIP() << tool << " is not installed";
  std::string base = tempDir("zero-layers");
  Layout l{base + "/img"};
  ASSERT_FALSE(mkimage(spec(), l.dir).empty());
  json c = l.config();
  c["rootfs"] = {{"type", "layers"}, {"diff_ids", json::array()}};
  c.erase("history");
  l.setConfig(c);
  json m = l.manifest();
  m["layers"] = json::array();
  l.setManifest(m);  // the OCI source, by hand: kdk-mkimage writes at least one layer
  std::string P = containersConf(base);
  RunResult b =
      run("set -e; skopeo copy -q oci:" + l.dir + ":1.0 docker-archive:" + base + "/s.tar:team/empty:1; " +
          "skopeo copy -q --format v2s2 oci:" + l.dir + ":1.0 dir:" + base + "/dir; " + P + "load -q -i " + base +
          "/s.tar >/dev/null; " + P + "save -q --format docker-archive -o " + base + "/p.tar team/empty:1");
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_NE(readFile(base + "/dir/manifest.json").find("\"layers\":[]"), std::string::npos);
  for (const std::string& ref :
       {"docker-archive:" + base + "/s.tar", "docker-archive:" + base + "/p.tar", "dir:" + base + "/dir"}) {
    int code = -1;
    json r = auditJson(ref, &code);
    expectClean(r, code, ref);
    EXPECT_EQ(countFindings(r, "image.layers.empty"), 1) << ref << r.dump(1);
    EXPECT_EQ(stepStatus(r, "layers"), "passed") << ref;
    EXPECT_EQ(r["layers"].size(), 0u) << ref;
  }
}

// 100000 nested brackets (200 KB) in a config's history or a manifest's unknown field: nlohmann
// copies and dumps by recursion, and the audit died of a stack overflow (SIGSEGV). Now the
// document is refused before it is parsed, with one line naming it and the limit (issue 25 §6).
TEST(ImageFormats, DeeplyNestedDocumentsAreRefusedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string where : {"config", "manifest"}) {
    Layout l = makeLayout("deep-" + where);
    if (where == "config") {
      std::string c = l.config().dump();
      c.pop_back();
      std::string bytes = c + R"(,"history":[{"created_by":"x","x":)" + deep + "}]}";
      json m = l.manifest();
      m["config"]["digest"] = l.put(bytes);
      m["config"]["size"] = bytes.size();
      l.setManifest(m);
    } else {
      std::string mj = l.manifest().dump();
      mj.pop_back();
      std::string bytes = mj + R"(,"x":)" + deep + "}";
      json ix = l.index();
      ix["manifests"][0]["digest"] = l.put(bytes);
      ix["manifests"][0]["size"] = bytes.size();
      l.setIndex(ix);
    }
    RunResult r = run(K + " audit oci:" + l.dir + ":1.0");
    EXPECT_EQ(r.code, 3) << where << ": " << r.err;
    EXPECT_NE(r.err.find("nests arrays and objects more than 256 deep"), std::string::npos) << where << ": " << r.err;
  }
}

// Docker's foreign layers, uncompressed or gzip, are layers as containerd and containers/image
// define them (images/mediatypes.go): read like any other, no layer.mediatype.unknown (issue 30).
TEST(ImageFormats, DockerForeignLayersAreKnown) {
  for (const std::string compression : {"none", "gzip"}) {
    Layout l = makeLayout("foreign-" + compression, spec("kdk", compression));
    json m = l.manifest();
    m["layers"][0]["mediaType"] = compression == "none" ? "application/vnd.docker.image.rootfs.foreign.diff.tar"
                                                        : "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
    std::string md = l.setManifest(m);
    int code = -1;
    json r = auditJson("oci:" + l.dir + "@" + md, &code);
    expectClean(r, code, "foreign " + compression);
    EXPECT_EQ(countFindings(r, "layer.mediatype.unknown"), 0) << r.dump(1);
    EXPECT_EQ(r["layers"][0]["compression"], compression) << r.dump(1);
  }
}

// A zstd:chunked layer whose tar lost its end padding, as podman 4.3's writer leaves it (made by
// hand: podman 4.3.1 here writes the padding for the images we tried): the DiffID check fails as
// containerd's does, and the finding names the known writer bug (issue 30).
TEST(ImageFormats, ZstdChunkedLayerWithoutTarPaddingNamesTheWriterBug) {
  if (!haveTool("zstd")) GTEST_SKIP() << "zstd is not installed";
  Layout l = makeLayout("zstd-chunked", spec("kdk", "none"));
  json m = l.manifest();
  std::string tar = readFile(l.blob(m["layers"][0]["digest"]));
  size_t end = tar.find_last_not_of('\0');
  ASSERT_NE(end, std::string::npos);
  std::string unpadded = l.dir + "/../unpadded.tar";
  writeFile(unpadded, tar.substr(0, (end / 512 + 1) * 512));  // the last member's data block, no end blocks
  RunResult z = run("zstd -q -f " + unpadded + " -o " + unpadded + ".zst");
  ASSERT_EQ(z.code, 0) << z.err;
  std::string blob = readFile(unpadded + ".zst");
  m["layers"][0] = {{"mediaType", "application/vnd.oci.image.layer.v1.tar+zstd"},
                    {"digest", l.put(blob)},
                    {"size", blob.size()},
                    {"annotations",
                     {{"io.containers.zstd-chunked.manifest-checksum", "sha256:" + std::string(64, 'a')},
                      {"io.containers.zstd-chunked.manifest-position", "0:0:0:1"}}}};
  std::string md = l.setManifest(m);
  int code = -1;
  json r = auditJson("oci:" + l.dir + "@" + md, &code);
  EXPECT_EQ(code, 1) << r.dump(1);
  bool named = false;
  for (const auto& f : r["findings"])
    if (f["code"] == "blob.digest.mismatch")
      named |= f["message"].get<std::string>().find("podman 4.3's zstd:chunked writer") != std::string::npos;
  EXPECT_TRUE(named) << r.dump(1);
  // The same bytes without the annotation: the mismatch alone, no guess at a writer.
  m["layers"][0].erase("annotations");
  json plain = auditJson("oci:" + l.dir + "@" + l.setManifest(m), &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(plain, "blob.digest.mismatch"), 1) << plain.dump(1);
  EXPECT_EQ(plain.dump().find("zstd:chunked writer"), std::string::npos);
}

// An artifact is reported as one: blobs verified, artifactType shown, no image steps.
TEST(ImageFormats, ArtifactsAndEncryptedLayers) {
  Layout l = makeLayout("artifact");
  std::string payload = "{\"sbom\": true}";
  std::string pd = l.put(payload);
  std::string empty = "{}";
  json m = {
      {"schemaVersion", 2},
      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
      {"artifactType", "application/vnd.example.sbom.v1+json"},
      {"config",
       {{"mediaType", "application/vnd.oci.empty.v1+json"}, {"digest", l.put(empty)}, {"size", 2}, {"data", "e30="}}},
      {"layers",
       {{{"mediaType", "application/vnd.example.sbom.v1+json"},
         {"digest", pd},
         {"size", payload.size()},
         {"annotations", {{"org.opencontainers.image.title", "sbom.json"}}}}}}};
  std::string md = l.setManifest(m);
  int code = -1;
  json r = auditJson("oci:" + l.dir + "@" + md, &code);
  expectClean(r, code, "artifact");
  EXPECT_EQ(r["subject"]["artifact_type"], "application/vnd.example.sbom.v1+json");
  EXPECT_EQ(stepStatus(r, "config"), "skipped");
  EXPECT_EQ(stepStatus(r, "os"), "skipped");
  EXPECT_EQ(r["artifact"]["blobs"][1]["verified"], true);
  EXPECT_EQ(countFindings(r, "image.tag.mutable"), 0) << "pinned by digest";
  // Named by its tag, an artifact can move like an image: the same warning (issue 30).
  json tagged = auditJson("oci:" + l.dir + ":1.0", &code);
  EXPECT_EQ(code, 0) << tagged.dump(1);
  EXPECT_EQ(tagged["subject"]["artifact_type"], "application/vnd.example.sbom.v1+json");
  EXPECT_EQ(countFindings(tagged, "image.tag.mutable"), 1) << tagged.dump(1);
  writeFile(l.blob(pd), "{\"sbom\": fals}");
  json bad = auditJson("oci:" + l.dir + "@" + md, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(bad, "blob.digest.mismatch"), 1) << bad.dump(1);

  // An ocicrypt layer: named as encrypted, its blob verified, no tar error.
  Layout e = makeLayout("encrypted");
  json em = e.manifest();
  em["layers"][0]["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip+encrypted";
  std::string ed = e.setManifest(em);
  json er = auditJson("oci:" + e.dir + "@" + ed, &code);
  EXPECT_EQ(code, 0) << er.dump(1);  // a warning
  EXPECT_EQ(countFindings(er, "layer.encrypted"), 1) << er.dump(1);
  EXPECT_EQ(run(K + " audit --fail-on warning oci:" + e.dir + "@" + ed).code, 1);
  EXPECT_EQ(countFindings(er, "blob.digest.mismatch"), 0) << er.dump(1);
  EXPECT_EQ(countFindings(er, "layer.mediatype.unknown"), 0);
  EXPECT_EQ(stepStatus(er, "layers"), "passed");
}

// Documents the image-spec schemas reject are findings naming the field.
TEST(ImageFormats, SchemaViolationsNameTheField) {
  struct Case {
    const char* code;
    const char* field;
    std::function<void(const Layout&)> mutate;
  } cases[] = {
      {"manifest.schema.invalid", "subject",
       [](const Layout& l) {
         json m = l.manifest();
         m["subject"] = "sha256:abc";
         l.setManifest(m);
       }},
      {"config.schema.invalid", "config.User",
       [](const Layout& l) {
         json c = l.config();
         c["config"]["User"] = 1000;
         l.setConfig(c);
       }},
      {"config.schema.invalid", "variant",
       [](const Layout& l) {
         json c = l.config();
         c["variant"] = 8;
         l.setConfig(c);
       }},
      {"config.schema.invalid", "config.Env[1]",
       [](const Layout& l) {
         json c = l.config();
         c["config"]["Env"].push_back("NOEQUALS");
         l.setConfig(c);
       }},
      {"manifest.schema.invalid", "layers[0].urls[0]",
       [](const Layout& l) {
         json m = l.manifest();
         m["layers"][0]["urls"] = {"not a url"};
         l.setManifest(m);
       }},
      {"manifest.schema.invalid", "artifactType",
       [](const Layout& l) {
         json m = l.manifest();
         m["artifactType"] = "no-slash";
         l.setManifest(m);
       }},
      {"manifest.schema.invalid", "config.data",
       [](const Layout& l) {
         json m = l.manifest();
         m["config"]["data"] = "%%%not base64";
         l.setManifest(m);
       }},
      {"manifest.schema.invalid", "config.data",
       [](const Layout& l) {
         json m = l.manifest();
         m["config"]["data"] = "e30=";
         l.setManifest(m);
       }},  // "{}": not the config
      // The index.json entry the audit resolves through is checked like any descriptor (issue 30).
      {"index.schema.invalid", "manifests[0].artifactType",
       [](const Layout& l) {
         json ix = l.index();
         ix["manifests"][0]["artifactType"] = "no-slash";
         l.setIndex(ix);
       }},
      {"index.schema.invalid", "manifests[0].data",
       [](const Layout& l) {
         json ix = l.index();
         ix["manifests"][0]["data"] = "e30=";  // "{}": not the manifest
         l.setIndex(ix);
       }},
      {"index.schema.invalid", "manifests[0].data",
       [](const Layout& l) {
         json ix = l.index();
         ix["manifests"][0]["data"] = "e30";  // padding missing
         l.setIndex(ix);
       }},
      {"layout.schema.invalid", "imageLayoutVersion",
       [](const Layout& l) { writeFile(l.dir + "/oci-layout", R"({"imageLayoutVersion":"2.0.0"})"); }},
  };
  for (const auto& c : cases) {
    Layout l = makeLayout(std::string("schema"));
    c.mutate(l);
    int code = -1;
    json r = auditJson("oci:" + l.dir + ":1.0", &code);
    ASSERT_TRUE(r.is_object()) << c.field;
    bool found = false;
    for (const auto& f : r["findings"])
      if (f["code"] == c.code && f.value("field", "") == c.field) found = true;
    EXPECT_TRUE(found) << c.code << " " << c.field << r.dump(1);
    EXPECT_EQ(code, 1) << c.field;  // schema findings are errors
  }
  // A document whose own mediaType differs from its descriptor's: a warning while its own type is
  // one containerd reads it by (go-containerregistry's validate accepts it too), an error when not.
  Layout docker = makeLayout("schema-mediatype");
  json m = docker.manifest();
  m["mediaType"] = "application/vnd.docker.distribution.manifest.v2+json";
  docker.setManifest(m);  // index.json's descriptor still says OCI manifest
  int code = -1;
  json w = auditJson("oci:" + docker.dir + ":1.0", &code);
  EXPECT_EQ(code, 0) << w.dump(1);
  bool warned = false;
  for (const auto& f : w["findings"])
    if (f["code"] == "manifest.schema.invalid" && f.value("field", "") == "mediaType")
      warned = f["severity"] == "warning";
  EXPECT_TRUE(warned) << w.dump(1);
  m["mediaType"] = "application/vnd.oci.image.config.v1+json";  // not a manifest: unusable
  docker.setManifest(m);
  json e = auditJson("oci:" + docker.dir + ":1.0", &code);
  EXPECT_NE(code, 0) << e.dump(1);
  EXPECT_EQ(stepStatus(e, "manifest"), "failed") << e.dump(1);

  // The image as mkimage writes it has none of them.
  Layout clean = makeLayout("schema-clean");
  json r = auditJson("oci:" + clean.dir + ":1.0");
  for (const char* code :
       {"manifest.schema.invalid", "config.schema.invalid", "index.schema.invalid", "layout.schema.invalid"})
    EXPECT_EQ(countFindings(r, code), 0) << code;
}

// The root entry, as umoci (newer releases: '/') and GNU tar ('./') write it, is normal.
TEST(ImageFormats, RootEntriesAreNormal) {
  json s = spec("rooted");
  json& entries = s["layers"][0]["entries"];
  entries.insert(entries.begin(), json::object({{"path", "/"}, {"type", "dir"}}));
  entries.insert(entries.begin(), json::object({{"path", "./"}, {"type", "dir"}}));
  Layout l = makeLayout("rooted", s);
  std::string top = l.index()["manifests"][0]["digest"];
  int code = -1;
  json r = auditJson("oci:" + l.dir + "@" + top, &code);
  expectClean(r, code, "root entries");
  EXPECT_EQ(r["os"]["id"], "rooted");
}

}  // namespace integration_image_formats_test
