// The breakout tables of containerd (pkg/archive/tar_test.go, TestBreakouts) and umoci
// (oci/layer/tar_extract_test.go), translated into layers. Each case lists the whole final
// view as a runtime leaves it, entry by entry, and how many entries a runtime rejects.
//
// A case's last layer is the tar the test unpacks; the layers before it are the tree the test
// prepares first (containerd's `apply`, umoci's lower entries). Where containerd and umoci
// disagree the expectation is containerd's, and the case says so: Kernodeck's view is what
// containerd (the runtime of Kubernetes nodes) would unpack.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "tar_builder.h"

namespace oci_breakout_test {

using namespace kernodeck::oci;
using kdktest::TarEntry;

namespace {

struct Case {
  const char* name;  // the test it comes from
  std::vector<std::vector<TarEntry>> layers;
  // The final view: "dir/", "file=content", "link->target"; sorted by path.
  std::vector<std::string> view;
  int unsafe = 0;           // entries of the last layer a runtime rejects
  bool suspicious = false;  // whether the last layer holds entries no build tool writes
};

TarEntry D(std::string p) { return {std::move(p), 'd'}; }
TarEntry F(std::string p, std::string c) { return {std::move(p), 'f', std::move(c)}; }
TarEntry L(std::string target, std::string p) {
  return {std::move(p), 'l', "", std::move(target)};
}  // tc.Symlink(old, new)
TarEntry H(std::string target, std::string p) {
  return {std::move(p), 'h', "", std::move(target)};
}  // tc.Link(old, new)
TarEntry W(std::string p) { return {std::move(p), 'f'}; }  // a whiteout marker

std::vector<std::string> dump(const LayeredView& v) {
  std::vector<std::string> out;
  for (const auto& [path, n] : v.nodes()) {
    if (n.kind == EntryKind::Dir)
      out.push_back(path + "/");
    else if (n.kind == EntryKind::Symlink)
      out.push_back(path + "->" + n.linkTarget);
    else
      out.push_back(path + "=" + (n.content ? *n.content : std::string("<not captured>")));
  }
  return out;
}

const std::string kPasswd = "inside";

std::vector<Case> containerdBreakouts() {
  std::vector<TarEntry> etcPasswd = {D("etc"), F("/etc/passwd", kPasswd)};
  auto with = [](std::vector<TarEntry> a, const std::vector<TarEntry>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  std::vector<TarEntry> allUsers = {D("/etc/"), F("/etc/passwd", "all users")};
  return {
      {"SymlinkAbsolute",
       {{D("etc"), L("/etc", "localetc"), F("/localetc/unbroken", "unbroken")}},
       {"etc/", "etc/unbroken=unbroken", "localetc->/etc"},
       0,
       true},
      {"SymlinkUpAndOut",
       {{D("etc"), D("dummy"), L("/dummy/../etc", "localetc"), F("/localetc/unbroken", "unbroken")}},
       {"dummy/", "etc/", "etc/unbroken=unbroken", "localetc->/dummy/../etc"},
       0,
       true},
      {"SymlinkMultipleAbsolute",
       {{D("etc"), D("dummy"), L("/etc", "/dummy/etc"), L("/dummy/etc", "localetc"),
         F("/dummy/etc/unbroken", "unbroken")}},
       {"dummy/", "dummy/etc->/etc", "etc/", "etc/unbroken=unbroken", "localetc->/dummy/etc"},
       0,
       true},
      {"SymlinkMultipleRelative",
       {{D("etc"), D("dummy"), L("/etc", "/dummy/etc"), L("./dummy/etc", "localetc"),
         F("/dummy/etc/unbroken", "unbroken")}},
       {"dummy/", "dummy/etc->/etc", "etc/", "etc/unbroken=unbroken", "localetc->./dummy/etc"},
       0,
       true},
      {"SymlinkEmptyFile",
       {{D("etc"), F("etc/emptied", "notempty"), L("/etc", "localetc"), F("/localetc/emptied", "")}},
       {"etc/", "etc/emptied=", "localetc->/etc"},
       0,
       true},
      {"HardlinkRelative",
       {with(etcPasswd,
             {D("breakouts"), L("../../etc", "breakouts/d1"), H("/breakouts/d1/passwd", "breakouts/mypasswd")})},
       {"breakouts/", "breakouts/d1->../../etc", "breakouts/mypasswd=inside", "etc/", "etc/passwd=inside"},
       0,
       true},
      {"HardlinkDownAndOut",
       {with(etcPasswd, {D("breakouts"), D("downandout"), L("../downandout/../../etc", "breakouts/d1"),
                         H("/breakouts/d1/passwd", "breakouts/mypasswd")})},
       {"breakouts/", "breakouts/d1->../downandout/../../etc", "breakouts/mypasswd=inside", "downandout/", "etc/",
        "etc/passwd=inside"},
       0,
       true},
      {"HardlinkAbsolute",
       {with(etcPasswd, {L("/etc", "localetc"), H("/localetc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localetc->/etc", "localpasswd=inside"},
       0,
       true},
      {"HardlinkRelativeLong",
       {with(etcPasswd, {L("../../../../../../../etc", "localetc"), H("/localetc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localetc->../../../../../../../etc", "localpasswd=inside"},
       0,
       true},
      {"HardlinkRelativeUpAndOut",
       {with(etcPasswd, {L("upandout/../../../etc", "localetc"), H("/localetc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localetc->upandout/../../../etc", "localpasswd=inside"},
       0,
       true},
      {"HardlinkDirectRelative",
       {with(etcPasswd, {H("../../../../../etc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd=inside"},
       0,
       true},
      {"HardlinkDirectAbsolute",
       {with(etcPasswd, {H("/etc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd=inside"},
       0,
       true},
      {"SymlinkParentDirectory",
       {with(etcPasswd, {L("/etc/", ".."), H("/etc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd=inside"},
       0,
       true},
      {"SymlinkEmptyFilename",
       {with(etcPasswd, {L("/etc/", ""), H("/etc/passwd", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd=inside"},
       0,
       true},
      {"SymlinkParentRelative",
       {with(etcPasswd, {L("/etc/", "localetc/sub/.."), H("/etc/passwd", "/localetc/localpasswd")})},
       {"etc/", "etc/localpasswd=inside", "etc/passwd=inside", "localetc->/etc/"},
       0,
       true},
      {"SymlinkSlashEnded",
       {with(etcPasswd, {D("localetc/"), H("/etc/passwd", "/localetc/localpasswd")})},
       {"etc/", "etc/passwd=inside", "localetc/", "localetc/localpasswd=inside"},
       0,
       true},
      {"SymlinkOverrideDirectory",
       {{D("/etc/"), F("/etc/passwd", kPasswd), D("/localetc/")},
        {L("/etc", "localetc"), H("/etc/passwd", "/localetc/localpasswd")}},
       {"etc/", "etc/localpasswd=inside", "etc/passwd=inside", "localetc->/etc"},
       0,
       true},
      {"SymlinkOverrideDirectoryRelative",
       {{D("/etc/"), F("/etc/passwd", kPasswd), D("/localetc/")},
        {L("../../etc", "localetc"), H("/etc/passwd", "/localetc/localpasswd")}},
       {"etc/", "etc/localpasswd=inside", "etc/passwd=inside", "localetc->../../etc"},
       0,
       true},
      {"DirectoryOverrideSymlink",
       {{D("/etc/"), F("/etc/passwd", kPasswd), L("/etc", "localetc")},
        {D("/localetc/"), H("/etc/passwd", "/localetc/localpasswd")}},
       {"etc/", "etc/passwd=inside", "localetc/", "localetc/localpasswd=inside"},
       0,
       true},
      {"DirectoryOverrideSymlinkAndHardlink",
       {{D("/etc/"), F("/etc/passwd", kPasswd), L("etc", "localetc"), H("/etc/passwd", "/localetc/localpasswd")},
        {D("/localetc/"), F("/localetc/localpasswd", "different")}},
       {"etc/", "etc/localpasswd=inside", "etc/passwd=inside", "localetc/", "localetc/localpasswd=different"},
       0,
       true},
      {"WhiteoutRootParent", {etcPasswd, {W(".wh...")}}, {"etc/", "etc/passwd=inside"}, 1, false},
      {"WhiteoutParent", {etcPasswd, {W("etc/.wh...")}}, {"etc/", "etc/passwd=inside"}, 1, false},
      {"WhiteoutRoot", {etcPasswd, {W(".wh..")}}, {"etc/", "etc/passwd=inside"}, 1, false},
      {"WhiteoutCurrentDirectory", {etcPasswd, {W("etc/.wh..")}}, {"etc/", "etc/passwd=inside"}, 1, false},
      {"WhiteoutSymlink",
       {with(allUsers, {L("/etc", "localetc")}), {W(".wh.localetc")}},
       {"etc/", "etc/passwd=all users"},
       0,
       false},
      {"WhiteoutSymlinkPath",
       {with(allUsers, {F("/etc/whitedout", "ahhhh whiteout"), L("/etc", "localetc")}), {W("localetc/.wh.whitedout")}},
       {"etc/", "etc/passwd=all users", "localetc->/etc"},
       0,
       true},
      {"WhiteoutDirectoryName",
       {with(allUsers, {F("/etc/whitedout", "ahhhh whiteout"), L("/etc", "localetc")}),
        {F(".wh.etc/somefile", "non-empty")}},
       {".wh.etc/", ".wh.etc/somefile=non-empty", "etc/", "etc/passwd=all users", "etc/whitedout=ahhhh whiteout",
        "localetc->/etc"},
       0,
       false},
      // containerd's mkparent creates the dead link's target directory before the no-op removal.
      {"WhiteoutDeadSymlinkParent",
       {with(allUsers, {L("/dne", "localetc")}), {W("localetc/.wh.etc")}},
       {"dne/", "etc/", "etc/passwd=all users", "localetc->/dne"},
       0,
       true},
      {"WhiteoutRelativePath",
       {with(allUsers, {L("/dne", "localetc")}), {W("dne/../.wh.etc")}},
       {"localetc->/dne"},
       0,
       true},
      {"SymlinkOverridePath",
       {{D("foo"), D("foo/tmp"), F("foo/tmp/breakout", "012"), L("/", "foo"), F("foo/tmp/breakout", "345"), D("foo"),
         D("foo/tmp"), F("foo/tmp/breakout", "678")}},
       {"foo/", "foo/tmp/", "foo/tmp/breakout=678", "tmp/", "tmp/breakout=345"},
       0,
       true},
      {"HardlinkSymlinkBeforeCreateTarget",
       {{D("etc"), L("/etc/passwd", "localpasswd"), H("localpasswd", "localpasswd-dup"), F("/etc/passwd", "after")}},
       {"etc/", "etc/passwd=after", "localpasswd->/etc/passwd", "localpasswd-dup->/etc/passwd"},
       0,
       true},
      {"HardlinkSymlinkRelative",
       {with(etcPasswd, {L("../../../../../etc/passwd", "passwdlink"), H("/passwdlink", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd->../../../../../etc/passwd", "passwdlink->../../../../../etc/passwd"},
       0,
       true},
      {"HardlinkSymlinkAbsolute",
       {with(etcPasswd, {L("/etc/passwd", "passwdlink"), H("/passwdlink", "localpasswd")})},
       {"etc/", "etc/passwd=inside", "localpasswd->/etc/passwd", "passwdlink->/etc/passwd"},
       0,
       true},
      // The test's temporary directory is a host path written into the layer; here a fixed one.
      {"HardlinkSymlinkChmod",
       {{L("/tmp/td/perm400", "/tmp/td/also-exists-outside-root"),
         H("/tmp/td/also-exists-outside-root", "sketchylink")}},
       {"sketchylink->/tmp/td/perm400", "tmp/", "tmp/td/", "tmp/td/also-exists-outside-root->/tmp/td/perm400"},
       0,
       true},
  };
}

std::vector<Case> umociBreakouts() {
  std::vector<Case> out = {
      // TestUnpackEntrySanitiseScoping
      {"SanitiseScoping/GarbagePrefix", {{F("/../file", "container content")}}, {"file=container content"}, 0, true},
      {"SanitiseScoping/DotDotPrefix", {{F("../file", "container content")}}, {"file=container content"}, 0, true},
      // TestUnpackEntryParentDir
      {"ParentDir",
       {{F("a/b/c/file", "creating parentdirs")}},
       {"a/", "a/b/", "a/b/c/", "a/b/c/file=creating parentdirs"},
       0,
       false},
      // TestUnpackEntryNonDirParent: umoci replaces the file with directories; containerd (and
      // docker) fail with ENOTDIR, so the entry is rejected and the file stays.
      {"NonDirParent", {{F("nondir", "x"), F("nondir/foo/bar/baz", "y")}}, {"nondir=x"}, 1, false},
      // TestUnpackEntryWhiteout
      {"Whiteout/EmptyWhiteoutName-Root", {{F("keep", "1")}, {W(".wh.")}}, {"keep=1"}, 1, false},
      {"Whiteout/EmptyWhiteoutName",
       {{F("some/path/keep", "1")}, {W("some/path/.wh.")}},
       {"some/", "some/path/", "some/path/keep=1"},
       1,
       false},
      {"Whiteout/HiddenFileInSubdir",
       {{F("another/path/.hiddenfile", "some value")}, {W("another/path/.wh..hiddenfile")}},
       {"another/", "another/path/"},
       0,
       false},
      {"Whiteout/DirInSubdir",
       {{F("some/path/dir/file1", "v"), F("some/path/dir/.subdir/file3", "v")}, {W("some/path/.wh.dir")}},
       {"some/", "some/path/"},
       0,
       false},
      // TestUnpackOpaqueWhiteout: lower entries, then the upper ones and the opaque marker last.
      {"OpaqueWhiteout/MissingUpperAncestor",
       {{D("test-subdir"), D("test-subdir/some"), D("test-subdir/some/dir"), D("test-subdir/another"),
         D("test-subdir/another/dir"), F("test-subdir/another/dir/somewhere", "l")},
        {F("test-subdir/some/dir/somewhere", "u"), W("test-subdir/.wh..wh..opq")}},
       {"test-subdir/", "test-subdir/some/", "test-subdir/some/dir/", "test-subdir/some/dir/somewhere=u"},
       0,
       false},
      {"OpaqueWhiteout/TwoLevel",
       {{D("test-subdir"), L("..", "test-subdir/link"), L("./nothing", "test-subdir/badlink"),
         F("test-subdir/dir/x", "l"), L("../badlink", "test-subdir/dir/link"),
         L("/../../../../../../../../../../../../etc/shadow", "test-subdir/dir/verybadlink2")},
        {F("test-subdir/file", "u"), D("test-subdir/dir"), F("test-subdir/dir/file", "u"),
         L("../../../../../../../../../../../../etc/shadow", "test-subdir/dir/verybadlink"),
         W("test-subdir/.wh..wh..opq")}},
       {"test-subdir/", "test-subdir/dir/", "test-subdir/dir/file=u",
        "test-subdir/dir/verybadlink->../../../../../../../../../../../../etc/shadow", "test-subdir/file=u"},
       0,
       false},
      // umoci keeps fileA (the spec: a whiteout hides lower layers only); containerd's overlay
      // applier fails on a whiteout of what the layer wrote (mknod: EEXIST): rejected, kept.
      {"OpaqueWhiteout/UpperWhiteout",
       {{D("test-subdir"), F("test-subdir/fileC", "l")},
        {W("test-subdir/.wh.fileB"), F("test-subdir/fileA", "u"), F("test-subdir/fileB", "u"),
         W("test-subdir/.wh.fileA"), W("test-subdir/.wh.fileC"), W("test-subdir/.wh..wh..opq")}},
       {"test-subdir/", "test-subdir/fileA=u", "test-subdir/fileB=u"},
       1,
       false},
      // TestUnpackHardlink
      {"Hardlink",
       {{F("regular", "some content"), H("/regular", "hard link"), L("../../../regular", "link"),
         H("../../../link", "hard link to symlink")}},
       {"hard link=some content", "hard link to symlink->../../../regular", "link->../../../regular",
        "regular=some content"},
       0,
       true},
  };
  // TestUnpackEntrySymlinkScoping: a file written through a link to the root, however spelled.
  for (const char* prefix : {"/", "/../", "/../../../../../../../../../../../../../../../",
                             "/./.././.././.././.././.././.././.././.././../", ".."})
    out.push_back({"SymlinkScoping",
                   {{L(prefix, "link"), F("link/file", "container content")}},
                   {"file=container content", std::string("link->") + prefix},
                   0,
                   true});
  return out;
}

void runTable(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    LayeredView view;
    std::vector<UnsafeEntry> unsafe, suspicious;
    ScanOptions o;
    o.capture = [](const std::string&) -> uint64_t { return 1 << 20; };
    for (size_t i = 0; i < c.layers.size(); ++i) {
      kdktest::StringStream in(kdktest::makeTar(c.layers[i]));
      LayerScan s = scanLayer(in, o);
      ASSERT_FALSE(s.error) << c.name;
      bool last = i + 1 == c.layers.size();
      if (last) {
        unsafe = s.unsafe;
        suspicious = s.suspicious;
        view.apply(s.entries, static_cast<int>(i), unsafe, suspicious);
      } else {
        std::vector<UnsafeEntry> u, w;
        view.apply(s.entries, static_cast<int>(i), u, w);
        EXPECT_TRUE(u.empty()) << c.name << ": the prepared tree is refused: " << u[0].name << ": " << u[0].reason;
      }
    }
    std::vector<std::string> got = dump(view);
    EXPECT_EQ(got, c.view) << c.name;
    std::string notes;
    for (const auto& u : unsafe) notes += " [unsafe " + u.name + ": " + u.reason + "]";
    for (const auto& u : suspicious) notes += " [suspicious " + u.name + ": " + u.reason + "]";
    EXPECT_EQ(static_cast<int>(unsafe.size()), c.unsafe) << c.name << notes;
    EXPECT_EQ(!suspicious.empty(), c.suspicious) << c.name << notes;
  }
}

}  // namespace

TEST(Breakouts, ContainerdTestBreakouts) { runTable(containerdBreakouts()); }

TEST(Breakouts, UmociExtractTests) { runTable(umociBreakouts()); }

}  // namespace oci_breakout_test
