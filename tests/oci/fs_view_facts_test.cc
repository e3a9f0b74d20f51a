// FsView::facts and FsView::listKinds are one lookup for what several calls answer (issue 31):
// on a layered view (its own answer) and on a directory view (the default), they must say what
// info(), hashKnown(), hashResolved(), list() say for every path, before and after a second read
// of a layer filled hashes in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "kernodeck/oci/fs_view.h"
#include "tar_builder.h"

namespace oci_fs_view_facts_test {

using namespace kernodeck;
using namespace kernodeck::oci;
using kdktest::makeTar;
using kdktest::StringStream;

namespace {

const char* const kAlgorithms[] = {"sha256", "md5", "sha1", "sha512", ""};

// Every path of `v` under `dir` (list()'s), checked call against call.
void expectSameAnswers(const FsView& v, const std::string& dir, int depth = 0) {
  ASSERT_LT(depth, 10);
  std::vector<std::pair<std::string, EntryKind>> want;
  for (const auto& name : v.list(dir)) {
    std::string p = dir.empty() ? name : dir + "/" + name;
    auto n = v.info(p);
    ASSERT_TRUE(n) << p;
    want.emplace_back(name, n->kind);
    for (const char* a : kAlgorithms) {
      SCOPED_TRACE(p + " " + a);
      auto f = v.facts(p, a);
      ASSERT_TRUE(f);
      EXPECT_EQ(f->kind, n->kind);
      EXPECT_EQ(f->layer, n->layer);
      EXPECT_EQ(f->hashKnown, v.hashKnown(p, a));
      auto h = v.hashResolved(p, a);
      EXPECT_EQ(f->hash, f->hashKnown && h.ok() ? *h : "");
    }
    if (n->kind == EntryKind::Dir) expectSameAnswers(v, p, depth + 1);
  }
  EXPECT_EQ(v.listKinds(dir), want) << dir;
  EXPECT_FALSE(v.facts(dir.empty() ? "missing" : dir + "/missing", "sha256"));
}

}  // namespace

TEST(FsViewFacts, LayeredViewAnswersAsTheSingleCalls) {
  const std::vector<std::vector<kdktest::TarEntry>> layers = {
      {{"pkg/a.py", 'f', "a = 1\n"}, {"pkg/sub/b.py", 'f', "b"}, {"pkg/zz", 'f', "z"}, {"pkg/link", 'l', "", "a.py"}},
      {{"pkg/c.py", 'f', "c"}, {"pkg/hard", 'h', "", "pkg/a.py"}, {"pkg/.wh.zz", 'f'}, {"pkg/Upper", 'd'}}};
  LayeredView v;
  std::vector<UnsafeEntry> unsafe;
  for (size_t i = 0; i < layers.size(); ++i) {
    ScanOptions o;
    o.hashes = [i](const std::string& p) { return i == 0 && p != "pkg/sub/b.py" ? kHashSha256 | kHashMd5 : 0u; };
    StringStream in(makeTar(layers[i]));
    v.apply(scanLayer(in, o).entries, static_cast<int>(i), unsafe);
  }
  ASSERT_TRUE(unsafe.empty());
  expectSameAnswers(v, "");
  EXPECT_EQ(v.listKinds("pkg"), (std::vector<std::pair<std::string, EntryKind>>{{"Upper", EntryKind::Dir},
                                                                                {"a.py", EntryKind::File},
                                                                                {"c.py", EntryKind::File},
                                                                                {"hard", EntryKind::File},
                                                                                {"link", EntryKind::Symlink},
                                                                                {"sub", EntryKind::Dir}}));
  EXPECT_FALSE(v.facts("pkg/c.py", "sha256")->hashKnown);  // the walk did not hash it
  // A second read of the layers fills in what the walk left out; facts() answers from it too.
  v.setHashFiller([&](int layer, const std::set<std::string>& paths) {
    return rehashTar(layers.at(static_cast<size_t>(layer)), paths);
  });
  v.prepareHashes({"pkg/c.py", "pkg/sub/b.py"}, "sha1");
  auto c = v.facts("pkg/c.py", "sha256");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->hashKnown);
  EXPECT_EQ(c->hash.size(), 64u);
  expectSameAnswers(v, "");
}

TEST(FsViewFacts, DirectoryViewAnswersAsTheSingleCalls) {
  char tmpl[] = "/tmp/kdk-facts-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::filesystem::create_directories(root + "/pkg/sub");
  std::ofstream(root + "/pkg/a.py") << "a = 1\n";
  std::ofstream(root + "/pkg/sub/b.py") << "b";
  std::filesystem::create_symlink("a.py", root + "/pkg/link");
  auto v = openDirView(root);
  ASSERT_TRUE(v.ok());
  expectSameAnswers(**v, "");
  auto link = (*v)->facts("pkg/link", "sha256");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->kind, EntryKind::Symlink);
  std::filesystem::remove_all(root);
}

// The directory view's root was listed through a dup() of its descriptor, which shares the
// offset: a second list("") started where the first readdir() had stopped, and named nothing.
TEST(DirView, ListsItsRootEveryTime) {
  char tmpl[] = "/tmp/kdk-facts-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::filesystem::create_directories(root + "/etc");
  std::ofstream(root + "/a") << "a";
  auto v = openDirView(root);
  ASSERT_TRUE(v.ok());
  auto first = (*v)->list("");
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, (std::vector<std::string>{"a", "etc"}));
  for (int i = 0; i < 3; ++i) {
    auto again = (*v)->list("");
    std::sort(again.begin(), again.end());
    EXPECT_EQ(again, first) << "listing " << i + 2;
  }
  std::filesystem::remove_all(root);
}

}  // namespace oci_fs_view_facts_test
