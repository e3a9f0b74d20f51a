// The layered view's shortcuts against its full rule: LayeredView::apply places most entries
// without landing()/makeParents() (a parent that is already a directory), and the view tree's
// lookups start from a thread's last directory. Random layers of files, directories, links and
// hardlinks are applied twice, once as they are and once with a whiteout of a name no layer
// writes (which takes every entry of the layer through the full rule), and the views compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <thread>

#include "kernodeck/oci/fs_view.h"

namespace oci_view_apply_test {

using namespace kernodeck::oci;

namespace {

std::string describe(const std::map<std::string, Node>& nodes) {
  std::ostringstream o;
  for (const auto& [p, n] : nodes)
    o << p << ' ' << toString(n.kind) << ' ' << n.mode << ' ' << n.size << ' ' << n.layer << ' ' << n.linkTarget << ' '
      << n.sha256 << ' ' << n.md5 << ' ' << (n.content ? *n.content : "-") << ' ' << n.dataLayer << ' ' << n.dataPath
      << '\n';
  return o.str();
}

std::string describe(const std::vector<UnsafeEntry>& list) {
  std::string out;
  for (const auto& u : list) out += u.name + ": " + u.reason + "\n";
  return out;
}

std::string randomPath(std::mt19937& rng, int maxDepth) {
  static const char* names[] = {"a", "b", "c", "lib", "x.py"};
  int depth = 1 + static_cast<int>(rng() % maxDepth);
  std::string p;
  for (int i = 0; i < depth; ++i) p += (p.empty() ? "" : "/") + std::string(names[rng() % 5]);
  return p;
}

std::vector<LayerEntry> randomLayer(std::mt19937& rng, int layer, bool markers) {
  std::vector<LayerEntry> out;
  int n = 5 + static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    LayerEntry e;
    e.path = randomPath(rng, 4);
    e.mode = 0644;
    unsigned pick = rng() % 20;
    if (pick < 9) {
      e.kind = EntryKind::File;
      e.size = 3;
      e.sha256.assignHex(std::string(64, "0123456789abcdef"[rng() % 16]));
      if (rng() % 2) e.md5.assignHex(std::string(32, "abc"[rng() % 3]));
      if (rng() % 4 == 0) e.content = std::make_shared<const std::string>("L" + std::to_string(layer));
    } else if (pick < 14) {
      e.kind = EntryKind::Dir;
      e.mode = 0700 + static_cast<uint32_t>(rng() % 8);
    } else if (pick < 17) {
      e.kind = EntryKind::Symlink;
      static const char* targets[] = {"", "/", "..", "../..", "/a/b"};
      unsigned t = rng() % 7;
      e.linkTarget = t < 5 ? std::string(targets[t]) + (t == 0 ? "" : "/") + randomPath(rng, 2) : randomPath(rng, 3);
    } else if (pick < 19) {
      e.kind = EntryKind::Hardlink;
      e.linkTarget = (rng() % 3 ? "" : "/") + randomPath(rng, 4);
    } else if (markers) {
      e.kind = rng() % 2 ? EntryKind::Whiteout : EntryKind::Opaque;
    } else {
      e.kind = EntryKind::Fifo;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

TEST(LayeredView, ShortcutsAgreeWithTheFullRuleOnRandomLayers) {
  std::mt19937 rng(31);
  for (int image = 0; image < 300; ++image) {
    LayeredView fast, full;
    std::vector<UnsafeEntry> fastUnsafe, fastOdd, fullUnsafe, fullOdd;
    int layers = 1 + static_cast<int>(rng() % 6);
    for (int l = 0; l < layers; ++l) {
      std::vector<LayerEntry> entries = randomLayer(rng, l, rng() % 3 == 0);
      fast.apply(entries, l, fastUnsafe, fastOdd);
      LayerEntry never;
      never.path = "never-written";
      never.kind = EntryKind::Whiteout;
      entries.push_back(never);
      full.apply(entries, l, fullUnsafe, fullOdd);
    }
    auto nodes = full.nodes();
    ASSERT_EQ(describe(fast.nodes()), describe(nodes)) << "image " << image;
    ASSERT_EQ(describe(fastUnsafe), describe(fullUnsafe)) << "image " << image;
    ASSERT_EQ(describe(fastOdd), describe(fullOdd)) << "image " << image;
    // Lookups in any order, from any last directory, answer as the nodes say; so do paths
    // that are not there.
    std::vector<std::string> probes;
    for (const auto& [p, n] : nodes) probes.push_back(p);
    for (int i = 0; i < 40; ++i) probes.push_back(randomPath(rng, 5));
    std::shuffle(probes.begin(), probes.end(), rng);
    for (const auto& p : probes) {
      auto n = fast.stat(p);
      ASSERT_EQ(fast.stat(p).has_value(), n.has_value()) << p;  // asked again: the thread's last file
      auto it = nodes.find(p);
      ASSERT_EQ(n.has_value(), it != nodes.end()) << p;
      if (n) {  // the whole node: a wrong node of the same kind (a sibling) must not pass
        EXPECT_EQ(describe({{p, *n}}), describe({{p, it->second}})) << p;
      }
    }
  }
}

// find() remembers a thread's last directory by tree and by the ids' epoch: a view reclaiming
// its removed nodes renumbers them, and another view holds other nodes at the same paths.
TEST(LayeredView, LookupsAfterReclaimingAndAcrossViews) {
  auto file = [](std::string p, int64_t size) {
    LayerEntry e;
    e.path = std::move(p), e.kind = EntryKind::File, e.size = size;
    return e;
  };
  auto dir = [](std::string p) {
    LayerEntry e;
    e.path = std::move(p), e.kind = EntryKind::Dir;
    return e;
  };
  LayeredView v, other;
  std::vector<UnsafeEntry> unsafe;
  std::vector<LayerEntry> first = {dir("big")};
  for (int i = 0; i < 70000; ++i) first.push_back(file("big/f" + std::to_string(i), 1));
  for (auto* d : {"x", "x/y", "x/y/z"}) first.push_back(dir(d));
  first.push_back(file("x/y/z/f", 7));
  first.push_back(file("x/y/g", 8));
  v.apply(first, 0, unsafe);
  other.apply({dir("x"), dir("x/y"), dir("x/y/z"), file("x/y/z/f", 70), file("x/y/g", 80)}, 0, unsafe);
  ASSERT_EQ(v.stat("x/y/z/f")->size, 7);  // this thread's last directory: v's x/y/z
  ASSERT_EQ(other.stat("x/y/z/f")->size, 70);
  ASSERT_EQ(v.stat("x/y/z/f")->size, 7);
  v.apply({file("big", 2)}, 1, unsafe);  // 70,000 nodes removed: reclaimed, the ids renumbered
  ASSERT_LT(v.nodesKept(), 100u);
  EXPECT_EQ(v.stat("x/y/z/f")->size, 7);
  EXPECT_EQ(v.stat("x/y/g")->size, 8);
  EXPECT_EQ(v.stat("big")->size, 2);
  EXPECT_FALSE(v.stat("big/f1"));
  EXPECT_EQ(other.stat("x/y/g")->size, 80);
  ASSERT_TRUE(unsafe.empty());
  // The file found last, removed, then asked for again.
  ASSERT_TRUE(v.stat("x/y/g"));
  LayerEntry gone;
  gone.path = "x/y/g", gone.kind = EntryKind::Whiteout;
  v.apply({gone}, 2, unsafe);
  EXPECT_FALSE(v.stat("x/y/g"));
  v.apply({file("x/y/g", 8)}, 3, unsafe);
  // Threads reading at once each keep their own last directory.
  std::vector<std::thread> readers;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const LayeredView& view = (i + t) % 2 ? v : other;
        bool mine = (i + t) % 2, deep = i % 3;
        int64_t want = mine ? (deep ? 7 : 8) : (deep ? 70 : 80);
        auto n = view.stat(deep ? "x/y/z/f" : "x/y/g");
        if (!n || n->size != want) ++wrong[t];
      }
    });
  for (auto& r : readers) r.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace oci_view_apply_test
