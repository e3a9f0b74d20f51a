// The fatbin reader (fatbin.h) and the ELF scanner over it (gpu_code_scan.h): real objects from
// nvcc (tests/fixtures/gpu-fatbins, made by make-gpu-fatbins; expected.txt is what cuobjdump or
// the -gencode flags say they hold), hand-made containers, and hostile ones, which end with a
// problem in time and memory bounded by the bytes fed, whatever they declare.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "kernodeck/gpu/fatbin.h"
#include "kernodeck/gpu/gpu_code_scan.h"
#include "kernodeck/oci/partial_content.h"
#include "kernodeck/util/strings.h"

namespace gpu_fatbin_test {

using namespace kernodeck;
using namespace kernodeck::gpu;

namespace {

std::string fixtureDir() { return std::string(SOURCE_DIR) + "/tests/fixtures/gpu-fatbins/"; }

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(std::string& s, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string entry(uint16_t kind, uint32_t arch, uint64_t flags, size_t payload, uint32_t headerSize = 64) {
  std::string e(headerSize, '\0');
  put(e, 0, kind, 2);
  put(e, 2, 0x0101, 2);
  put(e, 4, headerSize, 4);
  put(e, 8, payload, 8);
  put(e, 28, arch, 4);
  put(e, 40, flags, 8);
  return e + std::string(payload, 'p');
}

std::string container(const std::string& entries) {
  std::string h(16, '\0');
  put(h, 0, 0xBA55ED50, 4);
  put(h, 4, 1, 2);
  put(h, 6, 16, 2);
  put(h, 8, entries.size(), 8);
  return h + entries;
}

std::vector<std::string> names(const FatbinContainer& c) {
  std::vector<std::string> out;
  for (const auto& e : c.entries) out.push_back(e.name() + (e.compressed ? "+z" : ""));
  return out;
}

FatbinContainer readStreamed(const std::string& bytes, size_t block) {
  FatbinReader r(0, bytes.size());
  for (size_t at = 0; at < bytes.size(); at += block) r.feed(at, std::string_view(bytes).substr(at, block));
  return r.finish();
}

FileGpuCode scanStreamed(const std::string& file, size_t block) {
  GpuCodeScanner s(file.size());
  for (size_t at = 0; at < file.size(); at += block) s.feed(file.data() + at, std::min(block, file.size() - at));
  return s.finish();
}

// expected.txt: "NAME.so sass=sm_80,sm_90 ptx=compute_90 compressed=yes".
struct Expected {
  std::string sass, ptx;
  bool compressed = false;
};
std::map<std::string, Expected> expected(const std::string& dir) {
  std::map<std::string, Expected> out;
  std::istringstream in(readAll(dir + "expected.txt"));
  std::string line;
  while (std::getline(in, line)) {
    auto f = util::split(line, ' ');
    if (f.size() != 4) continue;
    out[f[0]] = {f[1].substr(5), f[2].substr(4), f[3] == "compressed=yes"};
  }
  return out;
}

// The offset of the `n`th container's header in a file.
size_t nthMagic(const std::string& file, int n) {
  size_t at = file.find(kFatbinMagicBytes);
  while (n-- > 0 && at != std::string::npos) at = file.find(kFatbinMagicBytes, at + 1);
  return at;
}

}  // namespace

TEST(Fatbin, EntriesAreNamedAsCuobjdumpNamesThem) {
  std::string c = container(entry(2, 80, 0x11, 40) + entry(1, 90, 0x8011, 24) + entry(2, 90, 0x100011, 8) +
                            entry(2, 100, 0x1200011, 16, 112) + entry(1, 120, 0x2011, 0, 80) + entry(2, 80, 0x11, 8) +
                            entry(8, 90, 0x11, 8));
  auto all = readFatbins(c);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].problem, "");
  EXPECT_EQ(all[0].entryCount, 7u);
  EXPECT_EQ(names(all[0]),
            (std::vector<std::string>{"sm_80", "compute_90+z", "sm_90a", "sm_100f", "compute_120+z", ""}));
  EXPECT_EQ(all[0].end, c.size());
}

TEST(Fatbin, NamesSortByArchitectureNotByText) {
  std::vector<std::string> v = {"sm_120", "sm_90a", "sm_100f", "sm_90", "sm_80", "sm_100a", "sm_100"};
  std::sort(v.begin(), v.end(), archNameLess);
  EXPECT_EQ(v, (std::vector<std::string>{"sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_120"}));
}

TEST(Fatbin, AnyCutOfTheStreamReadsTheSame) {
  std::string c = container(entry(2, 80, 0x11, 1000) + entry(1, 90, 0x8011, 300, 80) + entry(2, 120, 0x1000011, 77, 112));
  auto whole = readFatbins(c).at(0);
  for (size_t block : {1, 3, 16, 63, 64, 65, 1000}) {
    auto part = readStreamed(c, block);
    EXPECT_EQ(names(part), names(whole)) << block;
    EXPECT_EQ(part.problem, whole.problem) << block;
  }
}

TEST(Fatbin, HostileLengthsEndWithAProblem) {
  // A payload that declares 2 GB in a container of a few bytes.
  std::string big = container(entry(2, 80, 0x11, 8));
  put(big, 16 + 8, uint64_t(2) << 30, 8);
  EXPECT_NE(readFatbins(big).at(0).problem.find("past its container's end"), std::string::npos);
  // A container that declares more than the input holds; one whose size wraps around.
  std::string past = container(entry(2, 80, 0x11, 8));
  put(past, 8, uint64_t(2) << 30, 8);
  EXPECT_NE(readFatbins(past).at(0).problem.find("past the end of the file"), std::string::npos);
  put(past, 8, ~uint64_t(0) - 4, 8);
  EXPECT_NE(readFatbins(past).at(0).problem.find("past the end of the file"), std::string::npos);
  // Entry header sizes that would step backwards, stand still or swallow the container.
  for (uint32_t hs : {0u, 8u, 63u, 100000u}) {
    std::string bad = container(entry(2, 80, 0x11, 8) + entry(2, 90, 0x11, 8));
    put(bad, 16 + 4, hs, 4);
    EXPECT_NE(readFatbins(bad).at(0).problem.find("header size"), std::string::npos) << hs;
  }
  // A version or architecture no toolkit writes; bytes after the last entry.
  std::string v2 = container(entry(2, 80, 0x11, 8));
  put(v2, 4, 2, 2);
  EXPECT_EQ(readFatbins(v2).at(0).problem, "version 2, not 1");
  EXPECT_NE(readFatbins(container(entry(2, 0, 0x11, 8))).at(0).problem.find("architecture 0"), std::string::npos);
  EXPECT_NE(readFatbins(container(entry(2, 80, 0x11, 8) + "tail")).at(0).problem.find("hold no entry header"),
            std::string::npos);
  // Cut short.
  std::string whole = container(entry(2, 80, 0x11, 100));
  EXPECT_NE(readStreamed(whole.substr(0, 90), 7).problem.find("past the end"), std::string::npos);
}

TEST(Fatbin, AMillionEntriesCostTimeLinearInTheirBytesAndNoMemory) {
  // Fed one entry at a time: the input is never held, so neither the test nor the reader holds it.
  const std::string one = entry(2, 80, 0x11, 0);
  const uint64_t count = 1000000;
  std::string head = container("");
  put(head, 8, count * one.size(), 8);
  FatbinReader r(0, head.size() + count * one.size());
  r.feed(0, head);
  for (uint64_t i = 0; i < count; ++i) r.feed(head.size() + i * one.size(), one);
  auto c = r.finish();
  EXPECT_EQ(c.problem, "");
  EXPECT_EQ(c.entryCount, count);
  EXPECT_EQ(c.entries.size(), 1u);
  // Distinct entries are bounded.
  std::string distinct;
  for (uint32_t a = 10; a < 10 + kMaxDistinctEntries + 5; ++a) distinct += entry(2, a, 0x11, 0);
  auto d = readFatbins(container(distinct)).at(0);
  EXPECT_EQ(d.entries.size(), kMaxDistinctEntries);
  EXPECT_NE(d.problem.find("distinct"), std::string::npos);
}

// Every object nvcc made reads as its judge says, whole or cut into blocks of any size.
TEST(GpuCodeScan, NvccObjectsReadAsTheirJudgeSays) {
  auto want = expected(fixtureDir());
  ASSERT_GE(want.size(), 7u);
  for (const auto& [name, w] : want) {
    std::string file = readAll(fixtureDir() + name);
    ASSERT_FALSE(file.empty()) << name;
    for (size_t block : {size_t(1) << 20, size_t(4096), size_t(61), size_t(3)}) {
      FileGpuCode g = scanStreamed(file, block);
      EXPECT_EQ(util::join(g.sass, ","), w.sass) << name << " in blocks of " << block;
      EXPECT_EQ(util::join(g.ptx, ","), w.ptx) << name;
      EXPECT_EQ(g.compressed, w.compressed) << name;
      EXPECT_TRUE(g.problems.empty()) << name << ": " << util::join(g.problems, "; ");
      EXPECT_GE(g.containers, 1u) << name;
    }
  }
}

// The scanner looks for the magic sixteen places at a time: a container found at every offset
// from the lanes' start and across every cut of the stream, among bytes that nearly match (the
// magic's first and last bytes, a section name's start) and are not GPU code.
TEST(GpuCodeScan, AContainerIsFoundAtEveryPlaceAndCut) {
  std::string elf = std::string("\177ELF\2\1\1", 7) + std::string(57, '\0');  // no section table
  std::string nearly = std::string("P\xed\x55\x00P\x00\x00\xba", 8) + "fatbi" + std::string("fatbinX\0", 8);
  std::string c = container(entry(2, 80, 0x11, 40) + entry(1, 90, 0x11, 24));
  for (size_t shift = 0; shift < 34; ++shift) {
    std::string file = elf + std::string(shift, 'P') + nearly + c + nearly + std::string(shift % 5, '\xba');
    for (size_t block : {size_t(1), size_t(5), size_t(16), size_t(21), size_t(22), size_t(4096)}) {
      FileGpuCode g = scanStreamed(file, block);
      EXPECT_EQ(util::join(g.sass, ","), "sm_80") << "shift " << shift << ", blocks of " << block;
      EXPECT_EQ(util::join(g.ptx, ","), "compute_90") << "shift " << shift << ", blocks of " << block;
      EXPECT_EQ(g.containers, 1u) << "shift " << shift << ", blocks of " << block;
    }
  }
}

TEST(GpuCodeScan, OnlyElfFilesAreRead) {
  std::string c = container(entry(2, 80, 0x11, 8));
  GpuCodeScanner s(c.size() + 4);
  s.feed("PK\3\4", 4);
  EXPECT_FALSE(s.elf());
  s.feed(c.data(), c.size());
  EXPECT_TRUE(s.finish().empty());
}

TEST(GpuCodeScan, HostileFatbinsInTheFatbinSectionAreProblems) {
  std::string lib = readAll(fixtureDir() + "cuda13-sm80-sm90-ptx90.so");
  size_t at = nthMagic(lib, 0);
  ASSERT_NE(at, std::string::npos);
  // A container that declares 2 GB; one that runs past its section but not past the file.
  std::string huge = lib;
  put(huge, at + 8, uint64_t(2) << 30, 8);
  FileGpuCode g = scanGpuCode(huge);
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_NE(g.problems[0].find("in .nv_fatbin: declares 2147483648 bytes of entries, past the end of the file"),
            std::string::npos)
      << g.problems[0];
  std::string longer = lib;
  uint64_t declared = 0;
  for (int i = 7; i >= 0; --i) declared = (declared << 8) | static_cast<unsigned char>(lib[at + 8 + i]);
  // Its last entry grows with it, so the container stays well-formed but passes the section.
  put(longer, at + 8, declared + 4096, 8);
  size_t last = at + 16, next = last;
  while (next < at + 16 + declared) {
    last = next;
    uint64_t hs = 0, ps = 0;
    for (int i = 3; i >= 0; --i) hs = (hs << 8) | static_cast<unsigned char>(lib[next + 4 + i]);
    for (int i = 7; i >= 0; --i) ps = (ps << 8) | static_cast<unsigned char>(lib[next + 8 + i]);
    next += hs + ps;
  }
  uint64_t lastPayload = 0;
  for (int i = 7; i >= 0; --i) lastPayload = (lastPayload << 8) | static_cast<unsigned char>(lib[last + 8 + i]);
  put(longer, last + 8, lastPayload + 4096, 8);
  g = scanGpuCode(longer);
  ASSERT_EQ(g.problems.size(), 1u) << util::join(g.problems, "; ");
  EXPECT_NE(g.problems[0].find("bytes past the end of its section"), std::string::npos) << g.problems[0];
  // An entry that declares a payload past its container.
  std::string entryPast = lib;
  put(entryPast, at + 16 + 8, uint64_t(1) << 40, 8);
  g = scanGpuCode(entryPast);
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_NE(g.problems[0].find("past its container's end"), std::string::npos) << g.problems[0];
}

TEST(GpuCodeScan, MagicBytesOutsideTheFatbinSectionAreNotGpuCode) {
  std::string lib = readAll(fixtureDir() + "cuda13-sm80-sm90.so");
  FileGpuCode before = scanGpuCode(lib);
  // A malformed container in the ELF's early bytes (the dynamic symbols): ignored.
  std::string decoy = lib;
  std::string fake = container(entry(2, 35, 0x11, 8));
  put(fake, 8, uint64_t(1) << 30, 8);
  decoy.replace(0x200, fake.size(), fake);
  FileGpuCode g = scanGpuCode(decoy);
  EXPECT_EQ(g.sass, before.sass);
  EXPECT_TRUE(g.problems.empty()) << util::join(g.problems, "; ");
  // Without the section table (cut off), only well-formed containers count: the same lists.
  size_t cut = lib.size() - 64;
  FileGpuCode headless = scanGpuCode(decoy.substr(0, cut));
  EXPECT_EQ(headless.sass, before.sass);
  EXPECT_EQ(headless.ptx, before.ptx);
}

TEST(GpuCodeScan, OverlappingContainersAreNotReadTwice) {
  std::string lib = readAll(fixtureDir() + "cuda13-sm80-sm90.so");
  size_t at = nthMagic(lib, 0);
  ASSERT_NE(at, std::string::npos);
  // A well-formed container planted inside the first one's first payload.
  std::string planted = lib;
  std::string inner = container(entry(2, 35, 0x11, 8));
  planted.replace(at + 16 + 64 + 16, inner.size(), inner);
  FileGpuCode g = scanGpuCode(planted);
  EXPECT_EQ(util::join(g.sass, ","), "sm_80,sm_90");
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_NE(g.problems[0].find("lies inside the one at offset " + std::to_string(at)), std::string::npos)
      << g.problems[0];
  // More containers open at once than the scanner follows (each claims a payload that has not
  // gone by when the next starts): bounded, and said.
  std::string swarm = lib;
  for (size_t i = 0; i < kMaxOpenContainers + 4; ++i) {
    std::string c = container(entry(2, 35, 0x11, 0)).substr(0, 80);
    put(c, 8, 64 + 1500 + 64, 8);  // a second entry after the payload: open until then
    put(c, 16 + 8, 1500, 8);
    swarm.replace(at + 16 + 64 + 16 + i * 80, c.size(), c);
  }
  g = scanStreamed(swarm, 64);  // in small blocks, so that they are open at once
  EXPECT_EQ(util::join(g.sass, ","), "sm_80,sm_90");
  bool said = false;
  for (const auto& p : g.problems) said = said || p.find("overlap") != std::string::npos;
  EXPECT_TRUE(said) << util::join(g.problems, "; ");
}

TEST(GpuCodeScan, KeptBytesRoundTrip) {
  FileGpuCode g = scanGpuCode(readAll(fixtureDir() + "cuda13-sm100a-sm100f-sm120-ptx120.so"));
  std::string kept = encodeGpuCode(g);
  ASSERT_TRUE(isGpuCodeBytes(kept));
  auto back = decodeGpuCode(kept);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->sass, g.sass);
  EXPECT_EQ(back->ptx, g.ptx);
  EXPECT_EQ(back->compressed, g.compressed);
  EXPECT_FALSE(decodeGpuCode(std::string(kGpuCodeMagic) + "{\"sass\":3}").ok());
  EXPECT_FALSE(decodeGpuCode("\x7f" "ELF").ok());
  // The layer walk's readers know it is not the file's bytes.
  EXPECT_TRUE(oci::isPartialContent(kept));
}

}  // namespace gpu_fatbin_test
