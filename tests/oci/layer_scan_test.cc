#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/oci/scan_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/version.h"
#include "tar_builder.h"

namespace oci_layer_scan_test {

using namespace kernodeck;
using namespace kernodeck::oci;
using kdktest::makeTar;
using kdktest::StringStream;

TEST(LayerScan, HashesCompressedUncompressedAndFiles) {
  std::string tar = makeTar({{"etc/", 'd'}, {"./etc/os-release", 'f', "ID=debian\n"}, {"bin/sh", 'l', "", "busybox"}});
  std::string gz =
      makeTar({{"etc/", 'd'}, {"./etc/os-release", 'f', "ID=debian\n"}, {"bin/sh", 'l', "", "busybox"}}, true);
  StringStream in(gz);
  ScanOptions o;
  o.capture = [](const std::string& p) -> uint64_t { return p == "etc/os-release" ? 1024 : 0; };
  LayerScan s = scanLayer(in, o);
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_EQ(s.detected, Compression::Gzip);
  EXPECT_EQ(s.compressedSize, gz.size());
  EXPECT_EQ(s.digestHex, util::sha256Hex(gz));
  EXPECT_EQ(s.uncompressedSize, tar.size());
  EXPECT_EQ(s.diffIdHex, util::sha256Hex(tar));
  ASSERT_EQ(s.entries.size(), 3u);
  EXPECT_EQ(s.entries[1].path, "etc/os-release");
  EXPECT_EQ(s.entries[1].sha256.hex(), util::sha256Hex("ID=debian\n"));
  ASSERT_TRUE(s.entries[1].content);
  EXPECT_EQ(*s.entries[1].content, "ID=debian\n");
  EXPECT_EQ(s.entries[2].kind, EntryKind::Symlink);
  EXPECT_EQ(s.entries[2].linkTarget, "busybox");
  EXPECT_FALSE(s.entries[0].content);
}

TEST(LayerScan, WhiteoutsAndOpaque) {
  StringStream in(makeTar({{"a/.wh.b", 'f'}, {"c/.wh..wh..opq", 'f'}, {".wh..wh.plnk", 'f'}}));
  LayerScan s = scanLayer(in, {});
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].kind, EntryKind::Whiteout);
  EXPECT_EQ(s.entries[0].path, "a/b");
  EXPECT_EQ(s.entries[1].kind, EntryKind::Opaque);
  EXPECT_EQ(s.entries[1].path, "c");
  EXPECT_TRUE(s.unsafe.empty());
}

// Malformed whiteouts are refused with a reason; nothing of them reaches the entries.
TEST(LayerScan, MalformedWhiteoutsAreRefused) {
  struct Case {
    kdktest::TarEntry e;
    const char* reason;
  } cases[] = {
      {{"a/.wh.", 'f'}, "bare whiteout"},
      {{".wh...", 'f'}, "whiteout of '..'"},
      {{"x/.wh..", 'f'}, "whiteout of '.'"},
  };
  for (const auto& c : cases) {
    StringStream in(makeTar({c.e}));
    LayerScan s = scanLayer(in, {});
    ASSERT_EQ(s.unsafe.size(), 1u) << c.e.path;
    EXPECT_NE(s.unsafe[0].reason.find(c.reason), std::string::npos) << c.e.path << ": " << s.unsafe[0].reason;
    EXPECT_TRUE(s.entries.empty()) << c.e.path;
  }
}

// Names as containerd cleans them: rooted, '..' stopping at the root. Those no build tool
// writes are kept and noted; "/" and "./" (umoci writes "/") are the root, not noted.
TEST(LayerScan, NamesAreCleanedAsContainerdDoes) {
  struct Case {
    const char* name;
    const char* path;
    const char* note;
  } cases[] = {
      {"etc/passwd", "etc/passwd", ""},
      {"./etc/passwd", "etc/passwd", ""},
      {"etc/dir/", "etc/dir", ""},
      {"/", "", ""},
      {"./", "", ""},
      {".", "", ""},
      {"/etc/passwd", "etc/passwd", "absolute"},
      {"../evil", "evil", "'..'"},
      {"a/../../evil", "evil", "'..'"},
      {"/../../etc/x", "etc/x", "'..'"},
      {"a//b/./c", "a/b/c", ""},
      {"..", "", "'..'"},
  };
  for (const auto& c : cases) {
    std::string note;
    EXPECT_EQ(cleanEntryPath(c.name, note), c.path) << c.name;
    if (*c.note)
      EXPECT_NE(note.find(c.note), std::string::npos) << c.name << ": " << note;
    else
      EXPECT_EQ(note, "") << c.name;
  }
  StringStream in(makeTar({{"/", 'd'}, {"/etc/passwd", 'f', "x"}, {"y", 'h', "", "../../etc/passwd"}}));
  LayerScan s = scanLayer(in, {});
  EXPECT_TRUE(s.unsafe.empty());
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].path, "etc/passwd");
  EXPECT_EQ(s.entries[1].linkTarget, "../../etc/passwd");  // resolved when applied
  EXPECT_EQ(s.suspicious.size(), 2u);
}

// cleanEntryPath takes names already in normal form (most of them) without util::cleanRooted's
// list of components: on names made of the fragments that matter (".", "..", empty components,
// leading and trailing '/', "./"), it gives what the full rule gives, and the same note.
TEST(LayerScan, CleanNamesShortcutAgreesWithTheFullRule) {
  const char* fragments[] = {"a", "bc", ".", "..", "", "/", "./", ".wh.x", "..a", "a.", "//", "/.", "../"};
  std::mt19937 rng(31);
  for (int i = 0; i < 40000; ++i) {
    std::string name;
    for (int n = static_cast<int>(rng() % 7); n >= 0; --n) {
      name += fragments[rng() % std::size(fragments)];
      if (rng() % 2) name += '/';
    }
    util::RootedPath r = util::cleanRooted(name);
    std::string want = r.dotdot ? "'..' in the path" : r.absolute && !r.path.empty() ? "absolute path" : "";
    std::string note = "stale";
    EXPECT_EQ(cleanEntryPath(name, note), r.path) << name;
    EXPECT_EQ(note, want) << name;
  }
}

TEST(LayerScan, AbsurdSizeClaimIsRefusedWithoutReadingIt) {
  StringStream in(kdktest::makeClaimTar("huge", uint64_t(100) << 30));
  LayerScan s = scanLayer(in, {});
  ASSERT_EQ(s.unsafe.size(), 1u);
  EXPECT_NE(s.unsafe[0].reason.find("claims 100.0 GiB"), std::string::npos) << s.unsafe[0].reason;
  EXPECT_TRUE(s.entries.empty());
  EXPECT_TRUE(s.error);  // the data is not there: the layer is truncated
}

TEST(LayerScan, DuplicateEntryIsReportedAndLaterWins) {
  StringStream in(makeTar({{"f", 'f', "one"}, {"f", 'f', "two"}}));
  LayerScan s = scanLayer(in, {});
  EXPECT_TRUE(s.unsafe.empty());
  ASSERT_EQ(s.suspicious.size(), 1u);
  EXPECT_NE(s.suspicious[0].reason.find("duplicate"), std::string::npos);
  ASSERT_EQ(s.entries.size(), 2u);
}

// The duplicate check keeps indices into the layer's entries in a table that grows: past its
// first size, every duplicate is still found (and only those), whiteouts are not counted, and a
// later entry of a path kept twice is flagged each time.
TEST(LayerScan, DuplicatesAreFoundAmongThousandsOfEntries) {
  std::vector<kdktest::TarEntry> entries = {{"d/", 'd'}};
  for (int i = 0; i < 3000; ++i) entries.push_back({"d/f" + std::to_string(i), 'f', std::to_string(i)});
  entries.push_back({"d/.wh.gone", 'f'});
  entries.push_back({"d/.wh.gone", 'f'});  // a whiteout twice is not a duplicate entry
  for (int i : {0, 1500, 2999, 1500}) entries.push_back({"d/f" + std::to_string(i), 'f', "again"});
  entries.push_back({"d/", 'd'});
  StringStream in(makeTar(entries));
  LayerScan s = scanLayer(in, {});
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_EQ(s.entries.size(), entries.size());
  std::vector<std::string> dup;
  for (const auto& u : s.suspicious) {
    EXPECT_NE(u.reason.find("duplicate entry"), std::string::npos) << u.name << ": " << u.reason;
    dup.push_back(u.name);
  }
  EXPECT_EQ(dup, (std::vector<std::string>{"d/f0", "d/f1500", "d/f2999", "d/f1500", "d/"}));
}

// A captured file is kept in one buffer of its declared size, not in one grown by doubling as
// its blocks arrive (up to twice the bytes, for every RECORD and package database an image holds).
TEST(LayerScan, CapturedFileHoldsNoSlack) {
  std::string big(1000000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  StringStream in(makeTar({{"RECORD", 'f', big}}, true));
  ScanOptions o;
  o.capture = [](const std::string&) -> uint64_t { return 1 << 21; };
  LayerScan s = scanLayer(in, o);
  ASSERT_FALSE(s.error) << s.error->message;
  ASSERT_EQ(s.entries.size(), 1u);
  ASSERT_TRUE(s.entries[0].content);
  EXPECT_EQ(*s.entries[0].content, big);
  EXPECT_LT(s.entries[0].content->capacity(), big.size() + 4096);
}

TEST(LayerScan, TruncatedAndGarbageInputEndInAnError) {
  std::string gz = makeTar({{"f", 'f', std::string(100000, 'x')}}, true);
  StringStream truncated(gz.substr(0, gz.size() / 2));
  LayerScan s = scanLayer(truncated, {});
  ASSERT_TRUE(s.error);
  EXPECT_EQ(s.compressedSize, gz.size() / 2);  // every byte still counted and hashed

  StringStream garbage(std::string(4096, '\x7f'));
  LayerScan g = scanLayer(garbage, {});
  EXPECT_TRUE(g.error);
  StringStream empty("");
  EXPECT_TRUE(scanLayer(empty, {}).error);
}

TEST(LayerScan, LongNamesAndDeepNesting) {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "d/";
  std::string longName(300, 'n');
  StringStream in(makeTar({{deep + "f", 'f', "x"}, {longName, 'f', "y"}}));
  LayerScan s = scanLayer(in, {});
  ASSERT_FALSE(s.error);
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].path, deep + "f");
  EXPECT_EQ(s.entries[1].path, longName);
}

// A GNU sparse entry claiming 10 GB: handled without reading or hashing 10 GB.
TEST(LayerScan, SparseTenGigabyteClaimIsNotRead) {
  char tmpl[] = "/tmp/kdk-sparse-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string cmd =
      "cd " + dir + " && truncate -s 10G big && printf data >> big && tar --sparse -cf layer.tar big 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "GNU tar with --sparse is not available";
  std::ifstream in(dir + "/layer.tar", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_LT(bytes.size(), 1u << 20);
  auto t0 = std::chrono::steady_clock::now();
  StringStream s(bytes);
  LayerScan scan = scanLayer(s, {});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  ASSERT_FALSE(scan.error) << scan.error->message;
  ASSERT_EQ(scan.entries.size(), 1u);
  EXPECT_EQ(scan.entries[0].size, (int64_t(10) << 30) + 4);
  EXPECT_TRUE(scan.entries[0].sha256.empty());  // sparse: not hashed
  std::system(("rm -rf " + dir).c_str());
}

// Concatenated gzip members (pigz and some registries produce them) inflate as one stream.
TEST(LayerScan, MultiMemberGzip) {
  std::string tar = makeTar({{"a", 'f', std::string(70000, 'a')}, {"b", 'f', std::string(50000, 'b')}});
  char tmpl[] = "/tmp/kdk-gz-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  size_t half = tar.size() / 2;
  std::ofstream(dir + "/p1", std::ios::binary) << tar.substr(0, half);
  std::ofstream(dir + "/p2", std::ios::binary) << tar.substr(half);
  ASSERT_EQ(std::system(("cd " + dir + " && gzip -n p1 && gzip -n p2 && cat p1.gz p2.gz > layer.gz").c_str()), 0);
  std::ifstream in(dir + "/layer.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StringStream s(gz);
  LayerScan scan = scanLayer(s, {});
  ASSERT_FALSE(scan.error) << scan.error->message;
  EXPECT_EQ(scan.detected, Compression::Gzip);
  EXPECT_EQ(scan.diffIdHex, util::sha256Hex(tar));
  EXPECT_EQ(scan.digestHex, util::sha256Hex(gz));
  ASSERT_EQ(scan.entries.size(), 2u);
  EXPECT_EQ(scan.entries[1].sha256.hex(), util::sha256Hex(std::string(50000, 'b')));
  std::system(("rm -rf " + dir).c_str());
}

// The per-layer result cache gives back exactly what was stored, hostile names included.
// An entry's header is data like the rest: a digest that is not a string, an unsafe list of the
// wrong shape, a kind out of range or a count the text cannot hold is a miss, never a throw out
// of the reader or a read through a null key (found by fuzz_scan_cache).
TEST(ScanCache, DamagedHeadersAreMissesNotCrashes) {
  Digest d{"sha256", std::string(64, '0')};
  std::string z(64, '0');
  auto entry = [&](const std::string& digest, const std::string& unsafe, const std::string& entries,
                   const std::string& kind) {
    return "{\"compressed_size\":1,\"compression\":1,\"diff_id\":\"" + z + "\",\"digest\":" + digest +
           ",\"entries\":" + entries + ",\"files\":1,\"suspicious\":[],\"uncompressed_size\":1,\"unsafe\":" + unsafe +
           "}\netc\t" + kind + "\t493\t0\t\t\t\t\t-\n";
  };
  std::string good = "\"sha256:" + z + "\"";
  ASSERT_TRUE(decodeScan(entry(good, "[]", "1", "1"), d));  // the shape the damaged ones depart from
  EXPECT_FALSE(decodeScan(entry("[\"sha256:" + z + "\"]", "[]", "1", "1"), d));
  EXPECT_FALSE(decodeScan(entry(good, "[{\"name\":\"x\"}]", "1", "1"), d));
  EXPECT_FALSE(decodeScan(entry(good, "[[\"x\"]]", "1", "1"), d));
  EXPECT_FALSE(decodeScan(entry(good, "[]", "1", "99"), d));
  EXPECT_FALSE(decodeScan(entry(good, "[]", "1000000000000000", "1"), d));
  // Counts that are not unsigned integers (fuzz_scan_cache: a float past uint64's range was cast,
  // undefined behaviour under UBSan): a miss, as is a compression past the enum.
  for (const char* bad : {"1e300", "-1", "1.5", "\"1\"", "null"}) {
    EXPECT_FALSE(decodeScan(entry(good, "[]", bad, "1"), d)) << bad;
    std::string e = entry(good, "[]", "1", "1");
    std::string withBad = e;
    withBad.replace(withBad.find("\"compressed_size\":1"), 19, std::string("\"compressed_size\":") + bad);
    EXPECT_FALSE(decodeScan(withBad, d)) << bad;
  }
  std::string e = entry(good, "[]", "1", "1");
  EXPECT_FALSE(decodeScan(e.replace(e.find("\"compression\":1"), 15, "\"compression\":9"), d));
}

TEST(ScanCache, RoundTripAndDamage) {
  char tmpl[] = "/tmp/kdk-scancache-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  StringStream in(makeTar(
      {{"a\tb\nc\\d", 'f', "x"}, {"etc/os-release", 'f', "ID=x\n"}, {"l", 'l', "", "t\\a\tb"}, {"../bad", 'f', "y"}}));
  ScanOptions o;
  o.capture = [](const std::string& p) -> uint64_t { return p == "etc/os-release" ? 1024 : 0; };
  // sha1 (apk's checksums) only where asked for.
  o.hashes = [](const std::string& p) { return kHashSha256 | kHashMd5 | (p == "etc/os-release" ? kHashSha1 : 0u); };
  LayerScan s = scanLayer(in, o);
  ASSERT_FALSE(s.error);
  ASSERT_EQ(s.entries[1].path, "etc/os-release");
  EXPECT_EQ(s.entries[1].sha1, "838720265a0be80fc829188deba7b60e9cb4656a");
  EXPECT_TRUE(s.entries[0].sha1.empty());
  Digest d{"sha256", s.digestHex};
  storeScan(dir, d, s);
  auto back = loadScan(dir, d);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->entries.size(), s.entries.size());
  for (size_t i = 0; i < s.entries.size(); ++i) {
    EXPECT_EQ(back->entries[i].path, s.entries[i].path);
    EXPECT_EQ(back->entries[i].linkTarget, s.entries[i].linkTarget);
    EXPECT_EQ(back->entries[i].sha256.hex(), s.entries[i].sha256.hex());
    EXPECT_EQ(back->entries[i].md5.hex(), s.entries[i].md5.hex());
    EXPECT_EQ(back->entries[i].sha1, s.entries[i].sha1);
    EXPECT_EQ(back->entries[i].kind, s.entries[i].kind);
    EXPECT_EQ(static_cast<bool>(back->entries[i].content), static_cast<bool>(s.entries[i].content));
  }
  EXPECT_EQ(*back->entries[1].content, "ID=x\n");
  EXPECT_EQ(back->diffIdHex, s.diffIdHex);
  ASSERT_EQ(back->suspicious.size(), 1u);  // "../bad": kept as "bad", noted
  EXPECT_EQ(back->suspicious[0].name, s.suspicious[0].name);
  // Another digest misses; a torn file misses instead of failing.
  EXPECT_FALSE(loadScan(dir, Digest{"sha256", std::string(64, '0')}));
  // A scan stored under other options (a hash-only walk) is not this walk's.
  ScanOptions hashOnly = o;
  hashOnly.hashOnly = true;
  EXPECT_FALSE(loadScan(dir, d, hashOnly));
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/layers/sha256"))
    if (e.path().filename().string().starts_with(s.digestHex + ".v" + std::to_string(kernodeck::kAnalysisVersion)))
      file = e.path().string();
  ASSERT_FALSE(file.empty());
  std::ifstream f(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::ofstream(file, std::ios::binary) << text.substr(0, text.size() - 5);
  EXPECT_FALSE(loadScan(dir, d));
  std::system(("rm -rf " + dir).c_str());
}

// A tar that stops right after its last entry's data (no padding, no end blocks) ends there,
// as Go's archive/tar reads it (umoci insert writes such layers); one cut inside the data is
// still damaged.
TEST(LayerScan, EndRightAfterTheLastEntrysDataIsTheEnd) {
  std::string tar = makeTar({{"etc/extra", 'f', "extra\n"}});
  ASSERT_GE(tar.size(), 518u);
  for (bool gzipped : {false, true}) {
    std::string cut = tar.substr(0, 518);
    if (gzipped) {
      // The same bytes gzipped: what umoci writes.
      struct archive* a = archive_write_new();
      archive_write_set_format_raw(a);
      archive_write_add_filter_gzip(a);
      archive_write_set_bytes_in_last_block(a, 1);
      std::string out;
      archive_write_open(a, &out, nullptr, kdktest::appendTo, nullptr);
      struct archive_entry* ae = archive_entry_new();
      archive_entry_set_filetype(ae, AE_IFREG);
      archive_write_header(a, ae);
      archive_write_data(a, cut.data(), cut.size());
      archive_entry_free(ae);
      archive_write_close(a);
      archive_write_free(a);
      cut = out;
    }
    StringStream in(cut);
    LayerScan s = scanLayer(in, {});
    EXPECT_FALSE(s.error) << gzipped << ": " << (s.error ? s.error->message : "");
    ASSERT_EQ(s.entries.size(), 1u);
    EXPECT_EQ(s.entries[0].sha256.hex(), util::sha256Hex("extra\n"));
    EXPECT_EQ(s.uncompressedSize, 518u);
  }
  StringStream inside(tar.substr(0, 515));
  EXPECT_TRUE(scanLayer(inside, {}).error);
}

// A gzip layer inflates up to a thousandfold, so what the scan holds is bounded by entries and
// captured bytes, not by the blob's size: past either bound the scan stops with an error naming
// it (the layer step fails; nothing is read as complete), the digests still computed.
TEST(LayerScan, EntriesAndCapturedBytesAreBounded) {
  std::string gz = makeTar({{"a", 'f', "12345678"}, {"b", 'f', "12345678"}, {"c", 'f', "12345678"}}, true);
  {
    StringStream in(gz);
    ScanOptions o;
    o.maxEntries = 2;
    LayerScan s = scanLayer(in, o);
    ASSERT_TRUE(s.error);
    EXPECT_EQ(s.error->message, "layer holds more than 2 entries");
    EXPECT_EQ(s.digestHex, util::sha256Hex(gz));
  }
  {
    StringStream in(gz);
    ScanOptions o;
    o.capture = [](const std::string&) -> uint64_t { return 1 << 20; };
    o.maxCapturedBytes = 20;  // a and b fit (16 bytes), c does not
    LayerScan s = scanLayer(in, o);
    ASSERT_TRUE(s.error);
    EXPECT_NE(s.error->message.find("of files to read (package databases, metadata), last 'c'"), std::string::npos)
        << s.error->message;
    EXPECT_EQ(s.entries.size(), 2u);
  }
  StringStream in(gz);
  ScanOptions o;
  o.capture = [](const std::string&) -> uint64_t { return 1 << 20; };
  o.maxEntries = 3;
  o.maxCapturedBytes = 24;
  LayerScan s = scanLayer(in, o);
  EXPECT_FALSE(s.error) << s.error->message;
  EXPECT_EQ(s.entries.size(), 3u);
}

}  // namespace oci_layer_scan_test
