#include "kernodeck/oci/fs_view.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "kernodeck/util/hash.h"
#include "tar_builder.h"

namespace oci_fs_view_test {

using namespace kernodeck;
using namespace kernodeck::oci;
using kdktest::makeTar;
using kdktest::StringStream;

namespace {

struct Built {
  LayeredView view;
  std::vector<UnsafeEntry> unsafe;
};

Built build(const std::vector<std::vector<kdktest::TarEntry>>& layers) {
  Built b;
  ScanOptions o;
  o.capture = [](const std::string&) -> uint64_t { return 1 << 20; };
  for (size_t i = 0; i < layers.size(); ++i) {
    StringStream in(makeTar(layers[i]));
    LayerScan s = scanLayer(in, o);
    for (auto& u : s.unsafe) b.unsafe.push_back(u);
    b.view.apply(s.entries, static_cast<int>(i), b.unsafe);
  }
  return b;
}

}  // namespace

TEST(LayeredView, LaterLayersOverrideAndRememberTheLayer) {
  auto b = build({{{"etc/a", 'f', "1"}, {"etc/b", 'f', "1"}}, {{"etc/a", 'f', "2"}}});
  EXPECT_EQ(*b.view.readFile("/etc/a"), "2");
  EXPECT_EQ(b.view.stat("etc/a")->layer, 1);
  EXPECT_EQ(b.view.stat("etc/b")->layer, 0);
}

TEST(LayeredView, WhiteoutRemovesTreeFromLowerLayersOnly) {
  auto b = build({{{"d/x", 'f', "1"}, {"d/sub/y", 'f', "1"}, {"keep", 'f', "k"}},
                  {{"d/sub/new", 'f', "same layer"}, {"d/.wh.sub", 'f'}}});
  EXPECT_FALSE(b.view.stat("d/sub/y"));
  EXPECT_TRUE(b.view.stat("d/sub/new"));  // same-layer content is not hidden
  EXPECT_EQ(b.unsafe.size(), 1u);         // but containerd's overlay applier fails on such a whiteout
  EXPECT_TRUE(b.view.stat("d/x"));
  EXPECT_TRUE(b.view.stat("keep"));
}

TEST(LayeredView, OpaqueAppliesRegardlessOfPosition) {
  auto b = build({{{"d/old", 'f', "1"}}, {{"d/new", 'f', "2"}, {"d/.wh..wh..opq", 'f'}}});
  EXPECT_FALSE(b.view.stat("d/old"));
  EXPECT_TRUE(b.view.stat("d/new"));
  EXPECT_TRUE(b.view.stat("d"));
}

TEST(LayeredView, WhiteoutOfSymlinkRemovesTheLinkNotItsTarget) {
  auto b = build({{{"data/file", 'f', "x"}, {"link", 'l', "", "data"}}, {{".wh.link", 'f'}}});
  EXPECT_FALSE(b.view.stat("link"));
  EXPECT_TRUE(b.view.stat("data/file"));
}

TEST(LayeredView, HardlinksCopyTheTarget) {
  auto b = build({{{"a", 'f', "content"}, {"b", 'h', "", "a"}}});
  EXPECT_EQ(*b.view.readFile("b"), "content");
  EXPECT_TRUE(b.unsafe.empty());
}

// Hostile links as containerd applies them: inside the root, never outside it (the full
// tables of containerd and umoci are in breakout_test.cc).
TEST(LayeredView, BreakoutsStayInsideTheRoot) {
  // Write through a planted symlink (absolute and relative): applied inside the root.
  auto b1 = build({{{"evil", 'l', "", "/etc"}}, {{"evil/passwd", 'f', "pwned"}}});
  EXPECT_TRUE(b1.unsafe.empty());
  EXPECT_EQ(*b1.view.readFile("etc/passwd"), "pwned");
  EXPECT_EQ(b1.view.stat("evil")->kind, EntryKind::Symlink);
  auto b2 = build({{{"up", 'l', "", "../../.."}, {"up/x", 'f', "x"}}});
  EXPECT_TRUE(b2.unsafe.empty());
  EXPECT_EQ(*b2.view.readFile("x"), "x");
  // Hardlink to a path that is not in the image: a runtime fails on it.
  auto b3 = build({{{"h", 'h', "", "etc/shadow"}}});
  EXPECT_EQ(b3.unsafe.size(), 1u);
  EXPECT_FALSE(b3.view.stat("h"));
  // Symlinks resolve like a chroot: absolute and '..' chains end at the root.
  auto b4 = build({{{"etc/os-release", 'f', "ID=x"},
                    {"a/b/l1", 'l', "", "../../../../../etc/os-release"},
                    {"abs", 'l', "", "/../../etc/os-release"},
                    {"hop1", 'l', "", "hop2"},
                    {"hop2", 'l', "", "a/b/l1"},
                    {"dot", 'l', "", "."}}});
  EXPECT_EQ(*b4.view.resolve("a/b/l1"), "etc/os-release");
  EXPECT_EQ(*b4.view.readFile("abs"), "ID=x");
  EXPECT_EQ(*b4.view.readFile("hop1"), "ID=x");
  EXPECT_EQ(*b4.view.resolve("dot/dot/etc/os-release"), "etc/os-release");
  // Loops fail instead of hanging.
  auto b5 = build({{{"l1", 'l', "", "l2"}, {"l2", 'l', "", "l1"}}});
  EXPECT_FALSE(b5.view.resolve("l1").ok());
  // A whiteout reaching through a symlink removes the link's target, as containerd does.
  auto b6 = build({{{"real/x", 'f', "1"}, {"real/y", 'f', "1"}, {"ln", 'l', "", "real"}}, {{"ln/.wh.x", 'f'}}});
  EXPECT_TRUE(b6.unsafe.empty());
  EXPECT_FALSE(b6.view.stat("real/x"));
  EXPECT_TRUE(b6.view.stat("real/y"));
}

TEST(DirView, LinksNeverLeaveTheRoot) {
  char tmpl[] = "/tmp/kdk-dirview-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string root = tmpl;
  ASSERT_EQ(::mkdir((root + "/etc").c_str(), 0755), 0);
  std::ofstream(root + "/etc/os-release") << "ID=inside\n";
  ASSERT_EQ(::symlink("/etc/hostname", (root + "/abs").c_str()), 0);  // host file, must not be read
  ASSERT_EQ(::symlink("../../../../etc/os-release", (root + "/rel").c_str()), 0);
  ASSERT_EQ(::symlink("/", (root + "/hostroot").c_str()), 0);
  auto v = openDirView(root);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*(*v)->readFile("rel"), "ID=inside\n");
  EXPECT_FALSE((*v)->readFile("abs").ok());  // resolves to <root>/etc/hostname, which is absent
  EXPECT_EQ(*(*v)->readFile("hostroot/etc/os-release"), "ID=inside\n");
  EXPECT_EQ((*v)->stat("abs")->kind, EntryKind::Symlink);
  auto names = (*v)->list("");
  EXPECT_EQ(names.size(), 4u);
  std::system(("rm -rf " + root).c_str());
}

// More of the breakout table: whiteouts of the root and of a parent, a multi-step
// relative symlink chain, a symlink named '.', and a file planted through a chain.
TEST(LayeredView, MoreBreakoutCases) {
  // A whiteout naming the root itself is refused by the scanner (".wh." has no target).
  auto root = build({{{"keep", 'f', "1"}}, {{".wh.", 'f'}}});
  EXPECT_EQ(root.unsafe.size(), 1u);
  EXPECT_TRUE(root.view.stat("keep"));
  // A whiteout of a parent directory removes the whole tree below it, and nothing else.
  auto parent = build({{{"a/b/c", 'f', "1"}, {"a/x", 'f', "2"}, {"z", 'f', "3"}}, {{".wh.a", 'f'}}});
  EXPECT_FALSE(parent.view.stat("a/b/c"));
  EXPECT_FALSE(parent.view.stat("a"));
  EXPECT_TRUE(parent.view.stat("z"));
  // Multi-step relative symlinks that try to climb out end at the root.
  auto chain = build({{{"etc/passwd", 'f', "image"},
                       {"x/y/l1", 'l', "", "../l2"},
                       {"x/l2", 'l', "", "../../../../l3"},
                       {"l3", 'l', "", "etc/passwd"}}});
  EXPECT_EQ(*chain.view.readFile("x/y/l1"), "image");
  // A file written through a chain of planted symlinks lands where the chain ends, inside.
  auto planted = build({{{"d1", 'l', "", "d2"}, {"d2", 'l', "", "/tmp"}}, {{"d1/evil", 'f', "x"}}});
  EXPECT_TRUE(planted.unsafe.empty());
  EXPECT_EQ(*planted.view.readFile("tmp/evil"), "x");
  // A file below a file: containerd fails with ENOTDIR.
  auto notDir = build({{{"f", 'f', "1"}}, {{"f/x", 'f', "2"}}});
  EXPECT_EQ(notDir.unsafe.size(), 1u);
  EXPECT_EQ(notDir.view.stat("f")->kind, EntryKind::File);
  // A symlink named '.' is dropped by path normalisation (it names the root).
  auto dot = build({{{"./", 'd'}, {"a", 'f', "1"}}});
  EXPECT_TRUE(dot.view.stat("a"));
}

// list() skips a child's descendants by seeking; siblings whose names sort around '/' must stay.
TEST(LayeredView, ListNamesChildrenOnly) {
  auto b = build({{{"a/x/deep/file", 'f', "1"},
                   {"a/x-y", 'f', "1"},
                   {"a/x.z", 'f', "1"},
                   {"a/x0", 'f', "1"},
                   {"a/x/other", 'f', "1"},
                   {"a/w", 'f', "1"},
                   {"b/c", 'f', "1"}}});
  EXPECT_EQ(b.view.list("a"), (std::vector<std::string>{"w", "x", "x-y", "x.z", "x0"}));
  EXPECT_EQ(b.view.list(""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b.view.list("a/x"), (std::vector<std::string>{"deep", "other"}));
  EXPECT_TRUE(b.view.list("a/w").empty());
}

// A normalised path that exists resolves to itself; a link still resolves through it.
TEST(LayeredView, ResolveShortcutKeepsLinkSemantics) {
  auto b = build({{{"usr/bin/tool", 'f', "1"}, {"bin", 'l', "", "usr/bin"}, {"usr/bin/alias", 'l', "", "tool"}}});
  EXPECT_EQ(*b.view.resolve("usr/bin/tool"), "usr/bin/tool");
  EXPECT_EQ(*b.view.resolve("bin/tool"), "usr/bin/tool");
  EXPECT_EQ(*b.view.resolve("usr/bin/alias"), "usr/bin/tool");
  EXPECT_EQ(*b.view.resolve("usr/bin/alias", false), "usr/bin/alias");
  EXPECT_EQ(*b.view.resolve("/usr/./bin/../bin/tool"), "usr/bin/tool");
}

// The walk records no sha1 unless asked; prepareHashes("sha1") has the filler read the layer
// again for exactly the paths asked for, once, and hashResolved then answers from it.
TEST(LayeredView, Sha1ComesFromASecondReadOfTheLayer) {
  const std::vector<std::vector<kdktest::TarEntry>> layers = {{{"etc/a", 'f', "apk file\n"}, {"etc/b", 'f', "other"}},
                                                              {{"etc/c", 'f', "upper"}}};
  auto b = build(layers);
  EXPECT_TRUE(b.view.hashResolved("etc/a", "sha1").error().is(ErrorKind::Unsupported));
  std::vector<std::pair<int, std::set<std::string>>> calls;
  b.view.setHashFiller([&](int layer, const std::set<std::string>& paths) {
    calls.emplace_back(layer, paths);
    return rehashTar(layers.at(static_cast<size_t>(layer)), paths);
  });
  b.view.prepareHashes({"etc/a", "etc/c", "missing"}, "sha1");
  b.view.prepareHashes({"etc/a"}, "sha1");  // already filled: no third read
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (std::pair<int, std::set<std::string>>{0, {"etc/a"}}));
  EXPECT_EQ(calls[1], (std::pair<int, std::set<std::string>>{1, {"etc/c"}}));
  util::Hasher h("sha1");
  h.update(std::string("apk file\n"));
  EXPECT_EQ(*b.view.hashResolved("etc/a", "sha1"), h.hex());
  EXPECT_TRUE(b.view.hashResolved("etc/b", "sha1").error().is(ErrorKind::Unsupported));  // never asked for
  EXPECT_EQ(*b.view.hashResolved("etc/a", "md5"), b.view.stat("etc/a")->md5);  // the walk's hashes still answer
}

// The view keeps nodes packed (hashes as bytes, rare fields apart): every field a scan gave
// comes back from stat() as it was written, and hashKnown() says which hashes are held without
// a read. (A layer entry holds its digests as bytes too: RawDigest, below.)
TEST(LayeredView, PackedNodesKeepEveryField) {
  const std::string sha = util::sha256Hex("a"), md5 = "0cc175b9c0f1b6a831c399e269772661";
  LayerScan s;
  auto file = [](std::string p, std::string sha256, std::string md5, std::string sha1) {
    LayerEntry e;
    e.path = std::move(p), e.kind = EntryKind::File, e.mode = 0644, e.size = 1;
    EXPECT_TRUE(e.sha256.assignHex(sha256) && e.md5.assignHex(md5));
    e.sha1 = std::move(sha1);
    return e;
  };
  s.entries.push_back(file("a/plain", sha, md5, ""));
  s.entries.push_back(file("a/sha1", sha, "", "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8"));
  s.entries.push_back(file("a/none", "", "", ""));
  LayerEntry link;
  link.path = "a/link", link.kind = EntryKind::Symlink, link.mode = 0777, link.linkTarget = "plain";
  s.entries.push_back(link);
  LayerEntry hard;
  hard.path = "a/hard", hard.kind = EntryKind::Hardlink, hard.linkTarget = "a/plain";
  s.entries.push_back(hard);
  LayeredView v;
  std::vector<UnsafeEntry> unsafe;
  v.apply(s.entries, 3, unsafe);
  ASSERT_TRUE(unsafe.empty());

  struct Case {
    std::string path;
    EntryKind kind;
    std::string sha256, md5, sha1, linkTarget, dataPath;
    int dataLayer;
  };
  const Case cases[] = {
      {"a/plain", EntryKind::File, sha, md5, "", "", "", -1},
      {"a/sha1", EntryKind::File, sha, "", "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8", "", "", -1},
      {"a/none", EntryKind::File, "", "", "", "", "", -1},
      {"a/link", EntryKind::Symlink, "", "", "", "plain", "", -1},
      {"a/hard", EntryKind::File, sha, md5, "", "", "a/plain", 3},  // the target's node, with where its bytes are
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    auto n = v.stat(c.path);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->kind, c.kind);
    EXPECT_EQ(n->layer, 3);
    EXPECT_EQ(n->sha256, c.sha256);
    EXPECT_EQ(n->md5, c.md5);
    EXPECT_EQ(n->sha1, c.sha1);
    EXPECT_EQ(n->linkTarget, c.linkTarget);
    EXPECT_EQ(n->dataPath, c.dataPath);
    EXPECT_EQ(n->dataLayer, c.dataLayer);
    EXPECT_EQ(v.nodes().at(c.path).sha256, c.sha256);
    EXPECT_EQ(v.hashKnown(c.path, "sha256"), !c.sha256.empty());
    EXPECT_EQ(v.hashKnown(c.path, "md5"), !c.md5.empty());
    if (!c.sha256.empty()) {
      EXPECT_EQ(*v.hashResolved(c.path, "sha256"), c.sha256);
    }
  }
  EXPECT_EQ(v.stat("a")->kind, EntryKind::Dir);  // a parent the layer did not list
  EXPECT_EQ(v.stat("a")->mode, 0755u);
  EXPECT_FALSE(v.hashKnown("a/missing", "sha256"));
  EXPECT_FALSE(v.hashKnown("a/plain", "sha512"));
}

// The view's store only marks what a whiteout removes (view_tree.h): layers that write and then
// hide many files must not make it keep every node ever written. Layer after layer, 70,000 files
// are written under x/ and hidden again; the nodes kept stay near those held, and what survives
// (a file with its hashes and content, a symlink, the directory's listing) is intact.
TEST(LayeredView, NodesRemovedLayerAfterLayerAreReclaimed) {
  const std::string sha = util::sha256Hex("kept");
  LayeredView v;
  std::vector<UnsafeEntry> unsafe;
  auto file = [&](std::string p) {
    LayerEntry e;
    e.path = std::move(p), e.kind = EntryKind::File, e.mode = 0644, e.size = 4;
    e.sha256.assignHex(sha);
    return e;
  };
  std::vector<LayerEntry> base = {file("keep/file")};
  base[0].content = std::make_shared<const std::string>("kept");
  LayerEntry link;
  link.path = "keep/link", link.kind = EntryKind::Symlink, link.linkTarget = "file";
  base.push_back(link);
  v.apply(base, 0, unsafe);
  for (int round = 0; round < 6; ++round) {
    std::vector<LayerEntry> many;
    for (int i = 0; i < 70000; ++i) many.push_back(file("x/r" + std::to_string(round) + "_" + std::to_string(i)));
    v.apply(many, 1 + 2 * round, unsafe);
    LayerEntry hide;
    hide.path = "x", hide.kind = EntryKind::Whiteout;
    v.apply({hide}, 2 + 2 * round, unsafe);
  }
  ASSERT_TRUE(unsafe.empty());
  EXPECT_EQ(v.size(), 3u);           // keep, keep/file, keep/link
  EXPECT_LT(v.nodesKept(), 70000u);  // not the 420,000 written
  EXPECT_FALSE(v.stat("x"));
  EXPECT_EQ(v.list("keep"), (std::vector<std::string>{"file", "link"}));
  EXPECT_EQ(*v.readFile("/keep/link"), "kept");
  EXPECT_EQ(*v.hashResolved("keep/file", "sha256"), sha);
  EXPECT_EQ(v.stat("keep/link")->linkTarget, "file");
  // Written again after being reclaimed, a path is an ordinary node.
  v.apply({file("x/again")}, 20, unsafe);
  EXPECT_EQ(v.list("x"), (std::vector<std::string>{"again"}));
  EXPECT_EQ(v.stat("x/again")->layer, 20);
}

// A layer entry's digests are raw bytes: lowercase hex of the right length goes in and comes back
// the same; any other spelling (upper case, short, not hex) is refused and leaves it empty.
TEST(RawDigest, HexRoundTripsAndOtherSpellingsAreRefused) {
  const std::string sha = util::sha256Hex("a");
  Sha256Digest d;
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.hex(), "");
  ASSERT_TRUE(d.assignHex(sha));
  EXPECT_FALSE(d.empty());
  EXPECT_EQ(d.hex(), sha);
  std::string upper = sha;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& bad : {upper, sha.substr(1), sha + "0", std::string(64, 'g'), std::string("abc")}) {
    Sha256Digest b;
    ASSERT_TRUE(b.assignHex(sha));
    EXPECT_FALSE(b.assignHex(bad)) << bad;
    EXPECT_TRUE(b.empty()) << bad;
  }
  Md5Digest m;
  EXPECT_TRUE(m.assignHex(""));
  EXPECT_TRUE(m.empty());
  ASSERT_TRUE(m.assignHex("0cc175b9c0f1b6a831c399e269772661"));
  EXPECT_EQ(m.hex(), "0cc175b9c0f1b6a831c399e269772661");
}

}  // namespace oci_fs_view_test
