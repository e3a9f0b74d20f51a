// See gpu_code_scan.h.
#include "kernodeck/gpu/gpu_code_scan.h"

#include <string.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "elf_header.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::gpu {

namespace {

constexpr size_t kMaxNamePlaces = 4096;
constexpr std::string_view kNameEnd("fatbin\0", 7);  // the end of both section names
constexpr size_t kTail = 16;                         // >= the longest pattern ("__nv_relfatbin\0") - 1
constexpr uint32_t kShtNobits = 8;

// Calls f(i) for each place in `hay` where `needle` starts (the few bytes across a block's start).
template <class F>
void forEach(std::string_view hay, std::string_view needle, F f) {
  const char* base = hay.data();
  size_t at = 0;
  while (at + needle.size() <= hay.size()) {
    const void* hit = memmem(base + at, hay.size() - at, needle.data(), needle.size());
    if (!hit) break;
    size_t i = static_cast<size_t>(static_cast<const char*>(hit) - base);
    f(i);
    at = i + 1;
  }
}

// Sixteen bytes at once (GCC and Clang vector extensions: SSE2 on x86-64, NEON on arm64).
using Lanes = unsigned char __attribute__((vector_size(16)));

Lanes lanesAt(const char* p) {
  Lanes v;
  memcpy(&v, p, sizeof v);
  return v;
}

// Calls magic(i) for each place in `hay` where the fatbin magic starts and name(i) for each
// place where kNameEnd starts, in one pass over the bytes: a place is a candidate when its first
// byte and a later one match (0x50 ... 0xBA, 'f' ... 'n'), sixteen places at a time; candidates,
// rare, are compared whole: 6 to 7 GB/s, where memmem, once for each pattern, went at 1.4
// (docs/performance.md).
template <class Magic, class Name>
void forEachMark(std::string_view hay, Magic magic, Name name) {
  const char* p = hay.data();
  const size_t n = hay.size();
  auto check = [&](size_t i) {
    if (hay.substr(i, kFatbinMagicBytes.size()) == kFatbinMagicBytes) magic(i);
    if (hay.substr(i, kNameEnd.size()) == kNameEnd) name(i);
  };
  constexpr size_t kReach = sizeof(Lanes) + 5;  // the bytes one step reads: 16 places, 'n' 5 after 'f'
  size_t i = 0;
  const Lanes m0 = Lanes{} + 0x50, m3 = Lanes{} + 0xba, n0 = Lanes{} + 'f', n5 = Lanes{} + 'n';
  for (; n >= kReach && i <= n - kReach; i += sizeof(Lanes)) {
    const Lanes v = lanesAt(p + i);
    const auto hits = ((v == m0) & (lanesAt(p + i + 3) == m3)) | ((v == n0) & (lanesAt(p + i + 5) == n5));
    uint64_t any[2];
    memcpy(any, &hits, sizeof any);
    if ((any[0] | any[1]) == 0) continue;
    for (size_t j = 0; j < sizeof(Lanes); ++j)
      if (hits[j]) check(i + j);
  }
  for (; i < n; ++i) check(i);
}

struct Section {
  uint64_t begin = 0, end = 0;
  std::string name;  // ".nv_fatbin", "__nv_relfatbin" or "" (another)
};

}  // namespace

GpuCodeScanner::GpuCodeScanner(uint64_t fileSize) : size_(fileSize) {}

void GpuCodeScanner::readElfHeader() {
  auto h = elf::readHeader(head_);
  if (!h) return;
  uint64_t table = h->sectionTableSize();
  if (h->shoff >= elf::kHeaderSize && table <= elf::kMaxSectionTable && h->shoff <= size_ &&
      table <= size_ - h->shoff) {
    shtBegin_ = h->shoff;
    shtEnd_ = h->shoff + table;
  }
}

void GpuCodeScanner::startContainer(uint64_t at, uint64_t windowStart, std::string_view window) {
  if (open_.size() >= kMaxOpenContainers) retire();
  if (open_.size() >= kMaxOpenContainers) {
    tooManyOpen_ = true;
    return;
  }
  if (done_.size() + open_.size() >= kMaxContainers) {
    tooManyContainers_ = true;
    return;
  }
  FatbinReader r(at, size_);
  r.feed(windowStart, window);
  if (r.complete())
    done_.push_back(r.finish());
  else
    open_.push_back(std::move(r));
}

void GpuCodeScanner::retire() {
  for (size_t i = 0; i < open_.size();) {
    if (open_[i].complete()) {
      done_.push_back(open_[i].finish());
      open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void GpuCodeScanner::feed(const char* data, size_t n) {
  if (state_ == State::NotElf || n == 0) return;
  const std::string_view block(data, n);
  if (head_.size() < 64) {
    size_t take = std::min<size_t>(64 - head_.size(), n);
    head_.append(block.substr(0, take));
    if (state_ == State::Start && head_.size() >= 4) {
      if (std::string_view(head_).substr(0, 4) != "\177ELF") {
        state_ = State::NotElf;
        return;
      }
      state_ = State::Elf;
    }
    if (head_.size() == 64) readElfHeader();
  }
  if (state_ != State::Elf) {  // fewer than 4 bytes so far
    pos_ += n;
    return;
  }
  // The section header table, as it goes by.
  if (shtEnd_ > shtBegin_ && pos_ + n > shtBegin_ && pos_ < shtEnd_) {
    uint64_t from = std::max(pos_, shtBegin_), to = std::min(pos_ + n, shtEnd_);
    if (from == shtBegin_ + sht_.size()) sht_.append(block.substr(from - pos_, to - from));
  }
  // The containers already open read on; then the new ones, from where they start.
  for (auto& r : open_) r.feed(pos_, block);
  // A pattern that starts in the tail and ends in this block: found in `edge`; one wholly in
  // the block: found in the block.
  const uint64_t edgeStart = pos_ - tail_.size();
  std::string edge = tail_;
  edge.append(block.substr(0, std::min<size_t>(n, kTail)));
  auto name = [&](std::string_view where, uint64_t whereStart, size_t i) {
    // `i`: where "fatbin\0" starts in `where`; the name's start is 4 or 8 bytes before it.
    uint64_t q = whereStart + i;
    auto before = [&](std::string_view prefix) {
      if (q < prefix.size()) return false;
      uint64_t s = q - prefix.size();
      if (s >= whereStart) return where.substr(s - whereStart, prefix.size()) == prefix;
      // Starts before `where` (a block's search): the tail holds it.
      if (s < edgeStart) return false;
      std::string joined = tail_.substr(s - edgeStart);
      joined.append(where.substr(0, prefix.size() - joined.size()));
      return joined == prefix;
    };
    for (bool rel : {false, true}) {
      std::string_view prefix = rel ? "__nv_rel" : ".nv_";
      if (!before(prefix)) continue;
      if (names_.size() >= kMaxNamePlaces) {
        tooManyNames_ = true;
        return;
      }
      names_.push_back({q - prefix.size(), rel});
    }
  };
  forEach(edge, kFatbinMagicBytes, [&](size_t i) {
    if (i < tail_.size() && i + kFatbinMagicBytes.size() > tail_.size()) startContainer(edgeStart + i, edgeStart, edge);
  });
  forEach(edge, kNameEnd, [&](size_t i) {
    if (i < tail_.size() && i + kNameEnd.size() > tail_.size()) name(edge, edgeStart, i);
  });
  forEachMark(
      block, [&](size_t i) { startContainer(pos_ + i, pos_, block); }, [&](size_t i) { name(block, pos_, i); });
  // A container started in the edge has been fed only the edge's first bytes of the block.
  for (auto& r : open_)
    if (r.offset() < pos_) r.feed(pos_, block);
  retire();
  pos_ += n;
  if (n >= kTail) {
    tail_.assign(block.substr(n - kTail));
  } else {
    tail_.append(block);
    if (tail_.size() > kTail) tail_.erase(0, tail_.size() - kTail);
  }
}

FileGpuCode GpuCodeScanner::finish() {
  FileGpuCode out;
  if (state_ != State::Elf) return out;
  for (auto& r : open_) done_.push_back(r.finish());
  open_.clear();
  // The sections, from the table when it was read whole.
  std::vector<Section> sections;
  if (auto h = elf::readHeader(head_); h && shtEnd_ > shtBegin_ && sht_.size() == shtEnd_ - shtBegin_) {
    const bool is64 = h->is64, little = h->little;
    const uint64_t entsize = h->shentsize, strndx = h->shstrndx;
    size_t need = is64 ? 0x28 : 0x18;
    uint64_t count = entsize >= need ? sht_.size() / entsize : 0;
    const std::string_view t = sht_;
    auto field = [&](uint64_t i, size_t at32, size_t at64, bool wide) {
      return elf::readInt(t, i * entsize + (is64 ? at64 : at32), is64 && wide ? 8 : 4, little);
    };
    uint64_t strtab = strndx < count ? field(strndx, 0x10, 0x18, true) : UINT64_MAX;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t nameAt = field(i, 0x00, 0x00, false), type = field(i, 0x04, 0x04, false);
      uint64_t off = field(i, 0x10, 0x18, true), sz = field(i, 0x14, 0x20, true);
      if (type == kShtNobits || sz == 0 || off >= size_) continue;
      Section s{off, off + std::min(sz, size_ - off), ""};
      if (strtab != UINT64_MAX && nameAt <= UINT64_MAX - strtab)
        for (const auto& p : names_)
          if (p.offset == strtab + nameAt) s.name = p.relocatable ? "__nv_relfatbin" : ".nv_fatbin";
      sections.push_back(std::move(s));
    }
    std::sort(sections.begin(), sections.end(), [](const Section& a, const Section& b) { return a.begin < b.begin; });
  }
  auto sectionOf = [&](uint64_t at) -> const Section* {
    auto it = std::upper_bound(sections.begin(), sections.end(), at,
                               [](uint64_t v, const Section& s) { return v < s.begin; });
    // The last section starting at or before `at`; a fatbin section among overlapping ones wins.
    const Section* found = nullptr;
    for (auto j = it; j != sections.begin();) {
      --j;
      if (at < j->end && (!found || (found->name.empty() && !j->name.empty()))) found = &*j;
      if (it - j > 8) break;
    }
    return found;
  };
  auto problem = [&](std::string p) {
    if (out.problems.size() < kMaxGpuCodeProblems) out.problems.push_back(std::move(p));
  };
  // What the bounds left unread first: the cap on problems never hides it.
  if (tooManyOpen_)
    problem("more than " + std::to_string(kMaxOpenContainers) + " fatbins overlap: those past them were not read");
  if (tooManyContainers_)
    problem("more than " + std::to_string(kMaxContainers) + " fatbin magic numbers: those past them were not read");
  if (tooManyNames_)
    problem("more than " + std::to_string(kMaxNamePlaces) + " fatbin section names: not all were read");
  std::sort(done_.begin(), done_.end(),
            [](const FatbinContainer& a, const FatbinContainer& b) { return a.offset < b.offset; });
  std::set<std::string> sass, ptx;
  uint64_t coveredFrom = 0, coveredEnd = 0;  // the last container counted
  for (const auto& c : done_) {
    const Section* s = sectionOf(c.offset);
    bool fatbinSection = s && !s->name.empty();
    std::string where = "the fatbin at offset " + std::to_string(c.offset) + (fatbinSection ? " in " + s->name : "");
    if (coveredEnd > c.offset) {  // inside a container counted: its payload's bytes, or a forgery
      if (c.problem.empty())
        problem(where + " lies inside the one at offset " + std::to_string(coveredFrom) + ": not read");
      continue;
    }
    if (!fatbinSection && (!c.problem.empty() || (!sections.empty() && !s) || (s && c.end > s->end))) continue;
    if (!c.problem.empty()) problem(where + ": " + c.problem);
    if (fatbinSection && c.problem.empty() && c.end > s->end)
      problem(where + " runs " + std::to_string(c.end - s->end) + " bytes past the end of its section");
    ++out.containers;
    out.entries += c.entryCount;
    coveredFrom = c.offset;
    coveredEnd = c.end;
    for (const auto& e : c.entries) {
      if (e.kind == FatbinEntry::Kind::Sass) sass.insert(e.name());
      if (e.kind == FatbinEntry::Kind::Ptx) ptx.insert(e.name());
      out.compressed = out.compressed || (e.compressed && e.kind != FatbinEntry::Kind::Other);
    }
  }
  out.sass.assign(sass.begin(), sass.end());
  out.ptx.assign(ptx.begin(), ptx.end());
  std::sort(out.sass.begin(), out.sass.end(), archNameLess);
  std::sort(out.ptx.begin(), out.ptx.end(), archNameLess);
  done_.clear();
  return out;
}

FileGpuCode scanGpuCode(std::string_view file) {
  GpuCodeScanner s(file.size());
  s.feed(file.data(), file.size());
  return s.finish();
}

std::string encodeGpuCode(const FileGpuCode& code) {
  nlohmann::json j = {{"sass", code.sass},
                      {"ptx", code.ptx},
                      {"compressed", code.compressed},
                      {"containers", code.containers},
                      {"entries", code.entries},
                      {"problems", code.problems}};
  return std::string(kGpuCodeMagic) + j.dump();
}

bool isGpuCodeBytes(std::string_view bytes) { return bytes.starts_with(kGpuCodeMagic); }

Result<FileGpuCode> decodeGpuCode(std::string_view bytes) {
  if (!isGpuCodeBytes(bytes)) return Error::Invalid("not the GPU code kept of a library");
  nlohmann::json j = util::parseUntrustedJson(bytes.substr(kGpuCodeMagic.size()));
  FileGpuCode c;
  auto list = [&](const char* k, std::vector<std::string>& out) {
    if (!j.contains(k) || !j[k].is_array()) return false;
    for (const auto& v : j[k]) {
      if (!v.is_string()) return false;
      out.push_back(v.get<std::string>());
    }
    return true;
  };
  if (!j.is_object() || !list("sass", c.sass) || !list("ptx", c.ptx) || !list("problems", c.problems) ||
      !j.contains("compressed") || !j["compressed"].is_boolean() || !j.contains("containers") ||
      !j["containers"].is_number_unsigned() || !j.contains("entries") || !j["entries"].is_number_unsigned())
    return Error::Invalid("the GPU code kept of a library is malformed");
  c.compressed = j["compressed"].get<bool>();
  c.containers = j["containers"].get<uint64_t>();
  c.entries = j["entries"].get<uint64_t>();
  return c;
}

}  // namespace kernodeck::gpu
