// RECORD writer quirks (record_check.h) as a table: rows written the way real installers and
// build backends write them, against files on a real directory tree. Each is either a change
// (modified), a known quirk (info, with its reason) or a match.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <thread>

#include "../oci/tar_builder.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/util/hash.h"

namespace python_record_check_test {

using namespace kernodeck;
using namespace kernodeck::python;

namespace {

std::string b64(const std::string& content) {
  util::Hasher h("sha256");
  h.update(content);
  return util::base64UrlNoPad(h.raw());
}

std::string hexOf(const std::string& content) { return util::sha256Hex(content); }

}  // namespace

TEST(RecordQuirks, TableOfWriters) {
  char tmpl[] = "/tmp/kdk-record-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::string site = "opt/venv/lib/python3.11/site-packages";
  auto write = [&](const std::string& rel, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
    std::ofstream(root + "/" + rel) << content;
  };
  const std::string body = "# -*- coding: utf-8 -*-\nimport sys\nfrom tool import main\nsys.exit(main())\n";
  struct Case {
    std::string name;        // what the row is
    std::string recordPath;  // as written in RECORD, relative to site-packages
    std::string recorded;    // the content RECORD's hash was computed over
    std::string onDisk;      // the file as installed
    bool hexDigest;          // RECORD written in hex (astral-sh/uv#15398)
    std::string want;        // "match", "modified" or "quirk"
    std::string reasonHas;   // for quirks: a word of the reason
  };
  const Case cases[] = {
      {"pip script, shebang rewritten", "../../../bin/tool", "#!python\n" + body, "#!/opt/venv/bin/python3.11\n" + body,
       false, "quirk", "pip#10744"},
      {"env-style shebang", "../../../bin/tool2", "#!/usr/bin/env python3\n" + body, "#!/opt/other/bin/python\n" + body,
       false, "quirk", "pip#10744"},
      {"script with a changed body", "../../../bin/tool3", "#!python\n" + body,
       "#!/opt/venv/bin/python\n" + body + "evil()\n", false, "modified", ""},
      {"binary in bin", "../../../bin/native",
       "\x7f"
       "ELF1",
       "\x7f"
       "ELF2",
       false, "modified", ""},
      {"torch-like METADATA", "demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n",
       "Name: demo\nVersion: 1.0\nRequires-Dist: x\n", false, "quirk", "pytorch/pytorch#97153"},
      {"hex digest, file intact", "demo/hexed.py", "x = 1\n", "x = 1\n", true, "quirk", "astral-sh/uv#15398"},
      {"hex digest, file changed", "demo/hexed2.py", "x = 1\n", "x = 2\n", true, "modified", ""},
      {"module changed", "demo/__init__.py", "a = 1\n", "a = 2\n", false, "modified", ""},
      {"module intact", "demo/core.py", "b = 1\n", "b = 1\n", false, "match", ""},
  };
  Distribution d;
  d.name = "demo";
  d.version = "1.0";
  d.location = site;
  d.metadataDir = site + "/demo-1.0.dist-info";
  d.hasRecord = true;
  for (const auto& c : cases) {
    std::string inImage = c.recordPath.rfind("../", 0) == 0
                              ? "opt/venv/bin/" + c.recordPath.substr(c.recordPath.rfind('/') + 1)
                              : site + "/" + c.recordPath;
    write(inImage, c.onDisk);
    d.record.push_back({c.recordPath, "sha256", c.hexDigest ? hexOf(c.recorded) : b64(c.recorded),
                        std::to_string(c.recorded.size()), false});
  }
  auto view = oci::openDirView(root);
  ASSERT_TRUE(view.ok());
  RecordCheck rc = checkRecord(**view, d);
  EXPECT_EQ(rc.checked, std::size(cases));
  EXPECT_TRUE(rc.missing.empty());
  EXPECT_TRUE(rc.malformedRows.empty());
  for (const auto& c : cases) {
    std::string suffix = c.recordPath.substr(c.recordPath.rfind('/') + 1);
    auto in = [&](const std::vector<RecordIssue>& v) -> const RecordIssue* {
      for (const auto& i : v)
        if (i.path.ends_with("/" + suffix)) return &i;
      return nullptr;
    };
    const RecordIssue* modified = in(rc.modified);
    const RecordIssue* quirk = in(rc.quirks);
    EXPECT_EQ(modified != nullptr, c.want == "modified") << c.name;
    EXPECT_EQ(quirk != nullptr, c.want == "quirk") << c.name;
    if (quirk) {
      EXPECT_NE(quirk->quirk.find(c.reasonHas), std::string::npos) << c.name << ": " << quirk->quirk;
    }
  }
  // Without the content (an image's walk kept none) nothing is confirmed: the change stays one.
  EXPECT_EQ(classifyRecordQuirk("../../../bin/tool", false, nullptr, "sha256", "00"), "");
  EXPECT_EQ(classifyRecordQuirk("demo/__init__.py", false, nullptr, "sha256", "00"), "");
  bool hex = false;
  EXPECT_EQ(decodeRecordDigest("sha256", hexOf("x"), &hex), hexOf("x"));
  EXPECT_TRUE(hex);
  EXPECT_EQ(decodeRecordDigest("sha256", b64("x"), &hex), hexOf("x"));
  EXPECT_FALSE(hex);
  EXPECT_EQ(decodeRecordDigest("sha256", "!!", &hex), "");
  std::filesystem::remove_all(root);
}

// A RECORD is a few megabytes someone else wrote; each row once cost a read and a hash of the
// file it names, for digests the walk does not compute (here sha512), so 20000 rows naming one
// 8 MiB file meant 160 GB of hashing. Each file is now hashed once per algorithm, however many
// rows name it (issue 25 §6). The check runs on a thread the test leaves behind when late.
TEST(RecordQuirks, RowsNamingOneFileAgainCostOneRead) {
  char tmpl[] = "/tmp/kdk-record-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::string site = "usr/lib/python3/dist-packages";
  std::filesystem::create_directories(root + "/" + site + "/big");
  const std::string content(8 << 20, 'x');
  std::ofstream(root + "/" + site + "/big/data.bin") << content;
  util::Hasher h("sha512");
  h.update(content);
  std::string digest = util::base64UrlNoPad(h.raw());
  auto d = std::make_shared<Distribution>();
  d->name = "big";
  d->location = site;
  d->metadataDir = site + "/big-1.0.dist-info";
  d->hasRecord = true;
  for (int i = 0; i < 20000; ++i) d->record.push_back({"big/data.bin", "sha512", digest, "", false});
  d->record.push_back({"big/data.bin", "sha512", util::base64UrlNoPad(std::string(64, '\0')), "", false});
  auto view = oci::openDirView(root);
  ASSERT_TRUE(view.ok());
  std::shared_ptr<const oci::FsView> v = std::move(*view);
  auto done = std::make_shared<std::promise<RecordCheck>>();
  auto result = done->get_future();
  std::thread([v, d, done] { done->set_value(checkRecord(*v, *d)); }).detach();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "still hashing";
  RecordCheck rc = result.get();
  EXPECT_EQ(rc.checked, 20001u);
  ASSERT_EQ(rc.modified.size(), 1u);  // the one row with another digest, compared against the same hash
  EXPECT_TRUE(rc.malformedRows.empty());
  std::filesystem::remove_all(root);
}

namespace {

// A directory view that says it holds the SHA-256 of the files named `known*` (as a layer walk
// holds those it hashed), and records what prepareHashes() was asked for.
class PartlyHashedView : public oci::FsView {
 public:
  explicit PartlyHashedView(std::unique_ptr<oci::FsView> dir) : dir_(std::move(dir)) {}
  std::optional<oci::Node> stat(const std::string& p) const override { return dir_->stat(p); }
  std::vector<std::string> list(const std::string& d) const override { return dir_->list(d); }
  Result<std::string> readResolved(const std::string& p, uint64_t limit) const override {
    return dir_->readResolved(p, limit);
  }
  Result<std::string> hashResolved(const std::string& p, const std::string& a) const override {
    return dir_->hashResolved(p, a);
  }
  void prepareHashes(const std::vector<std::string>& paths, const std::string&) const override {
    prepared.insert(prepared.end(), paths.begin(), paths.end());
  }
  bool hashKnown(const std::string& p, const std::string& a) const override {
    return a == "sha256" && p.substr(p.rfind('/') + 1).starts_with("known");
  }
  mutable std::vector<std::string> prepared;

 private:
  std::unique_ptr<oci::FsView> dir_;
};

}  // namespace

// Each RECORD is parsed and resolved once (issue 31): the rows whose SHA-256 the view holds are
// checked at once, the others wait for prepareHashes() and are checked by finish(). The issues
// still come in the RECORD's row order, and only the waiting rows' files are prepared.
TEST(RecordChecker, WaitingRowsAreCheckedInRowOrder) {
  char tmpl[] = "/tmp/kdk-record-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::string site = "usr/lib/python3/dist-packages";
  std::filesystem::create_directories(root + "/" + site + "/pkg");
  Distribution d;
  d.name = "pkg";
  d.location = site;
  d.metadataDir = site + "/pkg-1.0.dist-info";
  d.hasRecord = true;
  // Alternating known and waiting files, every one changed since RECORD was written.
  std::vector<std::string> names = {"known1.py", "wait1.py", "known2.py", "wait2.py", "known3.py"};
  for (const auto& n : names) {
    std::ofstream(root + "/" + site + "/pkg/" + n) << "now\n";
    d.record.push_back({"pkg/" + n, "sha256", b64("then\n"), "", false});
  }
  d.record.push_back({"pkg/gone.py", "sha256", b64("x"), "", false});
  d.record.push_back({"pkg/bad.py", "sha256", "not base64!", "", false});  // waiting and malformed
  std::ofstream(root + "/" + site + "/pkg/bad.py") << "x\n";
  auto dir = oci::openDirView(root);
  ASSERT_TRUE(dir.ok());
  PartlyHashedView view(std::move(*dir));
  RecordChecker checker(view, d);
  std::vector<std::string> pending;
  checker.pendingHashes(pending);
  EXPECT_EQ(pending, (std::vector<std::string>{site + "/pkg/wait1.py", site + "/pkg/wait2.py", site + "/pkg/bad.py"}));
  RecordCheck rc = checker.finish();
  EXPECT_EQ(rc.checked, 7u);
  std::vector<std::string> modified;
  for (const auto& m : rc.modified) modified.push_back(m.path.substr(m.path.rfind('/') + 1));
  EXPECT_EQ(modified, names);
  ASSERT_EQ(rc.missing.size(), 1u);
  EXPECT_EQ(rc.missing[0].path, site + "/pkg/gone.py");
  EXPECT_EQ(rc.malformedRows, (std::vector<std::string>{"pkg/bad.py"}));
  // checkRecord() is the same check with the waiting rows prepared alone.
  RecordCheck whole = checkRecord(view, d);
  EXPECT_EQ(view.prepared, pending);
  ASSERT_EQ(whole.modified.size(), rc.modified.size());
  for (size_t i = 0; i < whole.modified.size(); ++i) EXPECT_EQ(whole.modified[i].path, rc.modified[i].path);
  std::filesystem::remove_all(root);
}

// The checkers of an environment's distributions start on several threads (issue 31): the same
// pending hashes and the same issues, in the same order, as starting them one by one on one
// thread, whatever the thread count.
TEST(RecordChecker, StartedOnThreadsAsOneByOne) {
  char tmpl[] = "/tmp/kdk-record-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::string site = "usr/lib/python3/dist-packages";
  std::vector<Distribution> dists(24);
  for (size_t i = 0; i < dists.size(); ++i) {
    Distribution& d = dists[i];
    std::string pkg = "pkg" + std::to_string(i);
    d.name = pkg;
    d.location = site;
    d.metadataDir = site + "/" + pkg + "-1.0.dist-info";
    d.hasRecord = true;
    std::filesystem::create_directories(root + "/" + site + "/" + pkg);
    for (size_t f = 0; f < 20; ++f) {
      std::string name = pkg + "/m" + std::to_string(f) + ".py", now = "v" + std::to_string(f);
      std::ofstream(root + "/" + site + "/" + name) << now;
      bool changed = (f + i) % 7 == 0;
      if (f % 5 == 0) {  // an algorithm the walk does not record: read and hashed by the checker
        util::Hasher h("sha512");
        h.update(changed ? "old" : now);
        d.record.push_back({name, "sha512", util::base64UrlNoPad(h.raw()), "", false});
      } else {
        d.record.push_back({name, "sha256", b64(changed ? "old" : now), "", false});
      }
    }
    d.record.push_back({pkg + "/gone.py", "sha256", b64("x"), "", false});
    std::ofstream(root + "/" + site + "/" + pkg + "/unlisted" + std::to_string(i % 3) + ".py") << "u";
  }
  auto dir = oci::openDirView(root);
  ASSERT_TRUE(dir.ok());
  PartlyHashedView view(std::move(*dir));
  std::vector<const Distribution*> ptrs;
  for (const auto& d : dists) ptrs.push_back(&d);
  auto summary = [&](std::vector<RecordChecker> checkers) {
    std::vector<std::string> out;
    for (auto& c : checkers) c.pendingHashes(out);
    for (auto& c : checkers) {
      RecordCheck rc = c.finish();
      out.push_back("checked " + std::to_string(rc.checked));
      for (const auto& m : rc.modified) out.push_back("modified " + m.path + " " + m.expected + " " + m.actual);
      for (const auto& m : rc.missing) out.push_back("missing " + m.path);
      for (const auto& m : rc.quirks) out.push_back("quirk " + m.path);
      for (const auto& m : rc.malformedRows) out.push_back("malformed " + m);
      for (const auto& m : rc.unlisted) out.push_back("unlisted " + m);
    }
    return out;
  };
  std::vector<RecordChecker> one;
  for (const auto& d : dists) one.emplace_back(view, d);
  std::vector<std::string> want = summary(std::move(one));
  EXPECT_GT(std::count_if(want.begin(), want.end(), [](const auto& s) { return s.starts_with("modified"); }), 24);
  EXPECT_EQ(std::count_if(want.begin(), want.end(), [](const auto& s) { return s.starts_with("unlisted"); }), 24);
  for (unsigned threads : {1u, 3u, 64u})
    for (int round = 0; round < 2; ++round)
      EXPECT_EQ(summary(startRecordCheckers(view, ptrs, threads)), want) << threads << " threads";
  EXPECT_TRUE(startRecordCheckers(view, {}, 4).empty());
  std::filesystem::remove_all(root);
}

// A RECORD read from the view (python::RecordReader: rows as views into its text) whose rows name
// one file several times and in several spellings (repeated, "pkg/./a.py", "pkg//a.py", through a
// linked directory, quoted with a comma, CRLF endings and a blank line between): each row is
// judged on its own, in row order, and a file any spelling lists is not unlisted. The same lists
// from a layered view (every hash known), a directory view (every row waits for finish()) and a
// view that knows some hashes.
TEST(RecordChecker, RowsThatRepeatOrCollideGiveTheSameLists) {
  const std::string site = "opt/venv/lib/python3.11/site-packages/";
  const std::vector<std::string> rows = {
      "pkg/known_a.py,sha256=" + b64("a\n") + ",2",             // 0 matches
      "pkg/./known_a.py,sha256=" + b64("x\n") + ",2",           // 1 the same file, another digest: modified
      "pkg//known_a.py,SHA256=" + b64("a\n") + ",2",            // 2 the same file again, uppercase algorithm
      "pkg/b.py,sha256=" + b64("zz") + "=,2",                   // 3 padded (malformed) and changed
      "\"pkg/odd,name.py\",sha256=" + b64("odd\n") + ",4",      // 4 quoted, matches
      "\"pkg/odd,name.py\",\"sha256=" + b64("bad\n") + "\",4",  // 5 quoted, changed
      "pkglink/sub/known_d.py,sha256=" + b64("d\n") + ",2",     // 6 through the linked directory, matches
      "pkg/missing.py,sha256=" + b64("m") + ",1",               // 7 missing
      "pkg/sub,sha256=" + b64("s") + ",1",                      // 8 a directory: missing
      "",                                                       //   a blank line
      "pkg/known_a.py,sha256=" + b64("a\n") + ",2",             // 9 repeated, matches
      "pkg-1.0.dist-info/RECORD,,",                             // 10 RECORD's own row
      "pkg/sub/known_d.py,sha256=" + b64("dd\n") + ",2",        // 11 the linked file under its own path: changed
      "pkg/x.py,nohash,1",                                      // 12 malformed, no algorithm
      "../../../../../../../../x,sha256=" + b64("x") + ",1",    // 13 leaves the root: malformed
      "pkg/b.py,sha256=" + b64("b\n") + ",2",                   // 14 repeated, matches
  };
  std::string record;
  for (size_t i = 0; i < rows.size(); ++i) record += rows[i] + (i % 2 ? "\r\n" : "\n");
  const std::vector<std::pair<std::string, std::string>> files = {{"pkg/known_a.py", "a\n"},
                                                                  {"pkg/b.py", "b\n"},
                                                                  {"pkg/c.py", "c\n"},
                                                                  {"pkg/odd,name.py", "odd\n"},
                                                                  {"pkg/sub/known_d.py", "d\n"},
                                                                  {"pkg/sub/e.py", "e\n"},
                                                                  {"pkg/__pycache__/known_a.cpython-311.pyc", "pyc"},
                                                                  {"pkg-1.0.dist-info/RECORD", record}};
  Distribution d;
  d.name = "pkg";
  d.location = site.substr(0, site.size() - 1);
  d.metadataDir = site + "pkg-1.0.dist-info";
  d.hasRecord = true;  // no rows given: the checker reads RECORD from the view
  char tmpl[] = "/tmp/kdk-record-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  std::vector<kdktest::TarEntry> entries = {{site + "pkglink", 'l', "", "pkg"}};
  for (const auto& [p, content] : files) {
    entries.push_back({site + p, 'f', content});
    std::filesystem::create_directories(std::filesystem::path(root + "/" + site + p).parent_path());
    std::ofstream(root + "/" + site + p) << content;
  }
  std::filesystem::create_directory_symlink("pkg", root + "/" + site + "pkglink");
  auto lists = [&](const oci::FsView& v) {
    RecordCheck rc = checkRecord(v, d);
    std::vector<std::string> out = {"checked " + std::to_string(rc.checked)};
    for (const auto& m : rc.modified) out.push_back("modified " + m.path + " " + m.expected + " " + m.actual);
    for (const auto& m : rc.missing) out.push_back("missing " + m.path + " " + m.expected);
    for (const auto& m : rc.quirks) out.push_back("quirk " + m.path);
    for (const auto& m : rc.malformedRows) out.push_back("malformed " + m);
    std::sort(rc.unlisted.begin(), rc.unlisted.end());  // a directory is listed in readdir's order
    for (const auto& m : rc.unlisted) out.push_back("unlisted " + m);
    return out;
  };
  const std::vector<std::string> want = {
      "checked 12",
      "modified " + site + "pkg/known_a.py " + hexOf("x\n") + " " + hexOf("a\n"),
      "modified " + site + "pkg/b.py " + hexOf("zz") + " " + hexOf("b\n"),
      "modified " + site + "pkg/odd,name.py " + hexOf("bad\n") + " " + hexOf("odd\n"),
      "modified " + site + "pkg/sub/known_d.py " + hexOf("dd\n") + " " + hexOf("d\n"),
      "missing " + site + "pkg/missing.py " + b64("m"),
      "missing " + site + "pkg/sub " + b64("s"),
      "malformed pkg/b.py",
      "malformed pkg/x.py",
      "malformed ../../../../../../../../x",
      "unlisted " + site + "pkg/c.py",
      "unlisted " + site + "pkg/sub/e.py",
  };
  auto layered = kdktest::viewOf(entries);
  EXPECT_EQ(lists(layered), want);
  auto dir = oci::openDirView(root);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(lists(**dir), want);
  auto again = oci::openDirView(root);
  ASSERT_TRUE(again.ok());
  PartlyHashedView partly(std::move(*again));
  EXPECT_EQ(lists(partly), want);
  std::filesystem::remove_all(root);
}

// A digest's spellings are judged as before the byte-wise comparison of matching rows (issue 31):
// either base64 alphabet, padding (tolerated, reported), spare low bits, a '=' inside, a length
// that is not the algorithm's, hex in uppercase, nothing at all.
TEST(RecordChecker, DigestSpellingsAreJudgedAsBefore) {
  const std::string site = "usr/lib/python3/dist-packages/";
  std::string content;  // a file whose urlsafe digest has a '-' or '_', so the two alphabets differ
  for (int i = 0; b64(content).find_first_of("-_") == std::string::npos; ++i) content = "v" + std::to_string(i) + "\n";
  const std::string d = b64(content);
  std::string standard = d;
  for (char& c : standard) c = c == '-' ? '+' : c == '_' ? '/' : c;
  std::string spare = d;  // 43 characters carry 258 bits: the last one's 2 low bits are spare
  spare.back() = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[(
      std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").find(d.back()) ^ 1)];
  std::string upperHex = hexOf(content);
  for (char& c : upperHex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  util::Hasher md5("md5");
  md5.update(content);
  struct Case {
    std::string algorithm, digest, want;  // the lists the row is in ("match": none)
  };
  const std::vector<Case> cases = {
      {"sha256", d, "match"},
      {"sha256", standard + "=", "malformed"},  // padded: reported, and compared (it matches)
      {"sha256", b64("other") + "=", "modified malformed"},
      {"sha256", spare, "match"},
      {"sha256", d.substr(0, 20) + "=" + d.substr(21), "malformed"},
      {"sha256", d.substr(0, 42), "modified"},
      {"sha256", d + "A", "modified"},
      {"sha256", d.substr(0, 41), "malformed"},
      {"sha256", upperHex, "quirk"},
      {"md5", util::base64UrlNoPad(md5.raw()), "match"},
      {"sha256", "", "malformed"},
  };
  std::vector<kdktest::TarEntry> entries;
  Distribution dist;
  dist.name = "pkg";
  dist.location = site.substr(0, site.size() - 1);
  dist.metadataDir = site + "pkg-1.0.dist-info";
  dist.hasRecord = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string name = "pkg/f" + std::to_string(i) + ".py";
    entries.push_back({site + name, 'f', content});
    dist.record.push_back({name, cases[i].algorithm, cases[i].digest, "", cases[i].digest.ends_with("=")});
  }
  auto view = kdktest::viewOf(entries);
  RecordCheck rc = checkRecord(view, dist);
  EXPECT_EQ(rc.checked, cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string name = "pkg/f" + std::to_string(i) + ".py";
    auto in = [&](const std::vector<RecordIssue>& v) -> int {
      return std::count_if(v.begin(), v.end(), [&](const RecordIssue& x) { return x.path == site + name; });
    };
    std::string got;
    for (int n = 0; n < in(rc.modified); ++n) got += " modified";
    for (int n = 0; n < in(rc.quirks); ++n) got += " quirk";
    for (long n = std::count(rc.malformedRows.begin(), rc.malformedRows.end(), name); n > 0; --n) got += " malformed";
    got = got.empty() ? "match" : got.substr(1);
    EXPECT_EQ(got, cases[i].want) << i << ": " << cases[i].digest;
  }
}

}  // namespace python_record_check_test
