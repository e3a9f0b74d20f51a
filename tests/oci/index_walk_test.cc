// chooseManifest on documents held in memory: nested indexes, entries without a platform, the
// depth bound and cycles, each case with the manifest containerd's images.Manifest would take
// (or its refusal).
#include "kernodeck/oci/index_walk.h"

#include <gtest/gtest.h>

#include <map>

#include "kernodeck/oci/platform.h"
#include "kernodeck/util/hash.h"

namespace oci_index_walk_test {

using namespace kernodeck;
using namespace kernodeck::oci;
using nlohmann::json;

namespace {

// Documents by digest, and descriptors for them.
struct Store {
  std::map<std::string, std::string> docs;
  int reads = 0;

  json put(const json& doc, const std::string& mediaType, const json& platform = nullptr) {
    std::string bytes = doc.dump();
    std::string d = "sha256:" + util::sha256Hex(bytes);
    docs[d] = bytes;
    json desc = {{"mediaType", mediaType}, {"digest", d}, {"size", bytes.size()}};
    if (!platform.is_null()) desc["platform"] = platform;
    return desc;
  }
  json image(const std::string& os, const std::string& arch, const json& platform = nullptr) {
    json cfg = {{"os", os}, {"architecture", arch}, {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}}};
    json m = {{"schemaVersion", 2},
              {"mediaType", media::kOciManifest},
              {"config", put(cfg, media::kOciConfig)},
              {"layers", json::array()}};
    return put(m, media::kOciManifest, platform);
  }
  json index(const std::vector<json>& entries, const json& platform = nullptr) {
    json list = json::array();
    for (const auto& e : entries) list.push_back(e);
    return put({{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", list}}, media::kOciIndex,
               platform);
  }
  Result<ManifestChoice> choose(const json& top, const std::string& want) {
    DocumentReader read = [this](const Descriptor& d, const std::string&) -> Result<std::string> {
      ++reads;
      auto it = docs.find(d.digest.str());
      if (it == docs.end()) return Error::NotFound("no " + d.digest.str());
      return it->second;
    };
    Descriptor t = *parseDescriptor(top);
    return chooseManifest(t, docs.at(t.digest.str()), *parsePlatform(want), read);
  }
};

json plat(const std::string& arch, const std::string& variant = "") {
  json p = {{"os", "linux"}, {"architecture", arch}};
  if (!variant.empty()) p["variant"] = variant;
  return p;
}

}  // namespace

TEST(IndexWalk, AManifestIsItsOwnChoice) {
  Store s;
  json m = s.image("linux", "arm64");
  auto c = s.choose(m, "linux/amd64");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->manifest.digest.str(), m["digest"]);
  EXPECT_TRUE(c->chain.empty());
  EXPECT_EQ(c->platformFrom, PlatformFrom::Reference);
}

// index.json -> index -> manifests: the amd64 one, with the chain of both indexes.
TEST(IndexWalk, NestedIndexesAreFollowed) {
  Store s;
  json amd = s.image("linux", "amd64", plat("amd64")), arm = s.image("linux", "arm64", plat("arm64"));
  json inner = s.index({arm, amd});
  json top = s.index({inner});
  auto c = s.choose(top, "linux/amd64");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->manifest.digest.str(), amd["digest"]);
  ASSERT_EQ(c->chain.size(), 2u);
  EXPECT_EQ(c->chain[0].digest.str(), top["digest"]);
  EXPECT_EQ(c->chain[1].digest.str(), inner["digest"]);
  EXPECT_EQ(chainText(c->chain), top["digest"].get<std::string>() + " -> " + inner["digest"].get<std::string>());
  EXPECT_EQ(c->platformFrom, PlatformFrom::Index);
  EXPECT_EQ(c->platform.str(), "linux/amd64");
}

// containerd sorts matching entries before those without a platform and follows the first only:
// a matching manifest beside a nested index wins even when the nested index holds a closer
// variant; a nested index that lacks the platform is not left for a later entry.
TEST(IndexWalk, OneEntryPerIndexAsContainerdFollows) {
  Store s;
  json v6 = s.image("linux", "arm", plat("arm", "v6")), v7 = s.image("linux", "arm", plat("arm", "v7"));
  json top = s.index({s.index({v7}), v6});
  auto c = s.choose(top, "linux/arm/v7");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->manifest.digest.str(), v6["digest"]);

  json amd = s.image("linux", "amd64", plat("amd64"));
  json armOnly = s.index({s.image("linux", "arm64", plat("arm64"))});
  auto miss = s.choose(s.index({armOnly, s.index({amd})}), "linux/amd64");
  ASSERT_FALSE(miss.ok());
  EXPECT_TRUE(miss.error().is(ErrorKind::NotFound));
  EXPECT_NE(miss.error().message.find(armOnly["digest"].get<std::string>()), std::string::npos) << miss.error().message;
  // amd64 "v1" is amd64, arm64 "v8.0" is arm64: normalised as containerd does.
  json v1 = s.image("linux", "amd64", plat("amd64", "v1"));
  auto n = s.choose(s.index({v1}), "linux/amd64");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->platform.str(), "linux/amd64");
}

// Entries without a platform: a platformed match first; else the first such entry, taken when
// its config's os/architecture match and refused otherwise (containerd tries no other).
TEST(IndexWalk, EntriesWithoutAPlatformAreKnownByTheirConfig) {
  Store s;
  json amd = s.image("linux", "amd64"), arm = s.image("linux", "arm64");
  auto c = s.choose(s.index({amd, arm}), "linux/amd64");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->manifest.digest.str(), amd["digest"]);
  EXPECT_EQ(c->platformFrom, PlatformFrom::Config);
  EXPECT_EQ(c->platform.str(), "linux/amd64");

  auto armFirst = s.choose(s.index({arm, amd}), "linux/amd64");
  ASSERT_FALSE(armFirst.ok());
  EXPECT_TRUE(armFirst.error().is(ErrorKind::NotFound));
  EXPECT_NE(armFirst.error().message.find("config for linux/arm64"), std::string::npos) << armFirst.error().message;

  // Mixed: the entry that names the platform wins over the platform-less ones before it.
  json named = s.image("linux", "amd64", plat("amd64"));
  auto mixed = s.choose(s.index({arm, named}), "linux/amd64");
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  EXPECT_EQ(mixed->manifest.digest.str(), named["digest"]);
  EXPECT_EQ(mixed->platformFrom, PlatformFrom::Index);
}

TEST(IndexWalk, DepthIsBoundedAndCyclesNamed) {
  Store s;
  json d = s.image("linux", "amd64", plat("amd64"));
  for (size_t i = 0; i < kMaxIndexDepth; ++i) d = s.index({d});
  auto ok = s.choose(d, "linux/amd64");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->chain.size(), kMaxIndexDepth);
  auto deep = s.choose(s.index({d}), "linux/amd64");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("deeper than 4"), std::string::npos) << deep.error().message;

  // A cycle: an index whose entry names a digest whose stored bytes are that index again (a
  // store that does not verify, or a digest algorithm nobody can check).
  json a = s.index({s.image("linux", "arm64", plat("arm64"))});
  json loop = a;
  loop["digest"] = "sha256:" + std::string(64, 'c');
  json b = s.index({loop});
  s.docs[loop["digest"]] = s.docs[b["digest"]];
  auto cyc = s.choose(b, "linux/amd64");
  ASSERT_FALSE(cyc.ok());
  EXPECT_NE(cyc.error().message.find("sha256:" + std::string(64, 'c')), std::string::npos) << cyc.error().message;
  EXPECT_NE(cyc.error().message.find("cycle"), std::string::npos) << cyc.error().message;
}

}  // namespace oci_index_walk_test
