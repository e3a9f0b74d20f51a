// See fatbin.h.
#include "kernodeck/gpu/fatbin.h"

#include <algorithm>
#include <optional>

namespace kernodeck::gpu {

namespace {

constexpr size_t kEntryBase = 64;  // the entry header's fields this reader reads
constexpr uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000, kFlagArchSpecific = 0x100000,
                   kFlagFamily = 0x200000;
constexpr size_t kMaxContainersRead = 1024;  // readFatbins: containers started in one input

uint64_t le(std::string_view b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

// "sm_90a" -> (90, 1): the number, then 0 plain, 1 'a', 2 'f'; none when not such a name.
std::optional<std::pair<unsigned, int>> archKey(std::string_view n) {
  size_t p = n.starts_with("sm_") ? 3 : n.starts_with("compute_") ? 8 : 0;
  if (p == 0) return std::nullopt;
  unsigned v = 0;
  size_t digits = 0;
  for (; p < n.size() && n[p] >= '0' && n[p] <= '9' && digits < 4; ++p, ++digits) v = v * 10 + unsigned(n[p] - '0');
  if (digits == 0) return std::nullopt;
  if (p == n.size()) return std::make_pair(v, 0);
  if (p + 1 == n.size() && (n[p] == 'a' || n[p] == 'f')) return std::make_pair(v, n[p] == 'a' ? 1 : 2);
  return std::nullopt;
}

}  // namespace

std::string FatbinEntry::name() const {
  if (kind == Kind::Other) return "";
  std::string n = (kind == Kind::Sass ? "sm_" : "compute_") + std::to_string(arch);
  if (variant) n += variant;
  return n;
}

bool archNameLess(std::string_view a, std::string_view b) {
  auto ka = archKey(a), kb = archKey(b);
  if (ka && kb) return *ka != *kb ? *ka < *kb : a < b;
  if (ka || kb) return bool(ka);
  return a < b;
}

FatbinReader::FatbinReader(uint64_t offset, uint64_t inputSize) : inputSize_(inputSize), want_(offset) {
  c_.offset = offset;
  c_.end = std::min(inputSize, offset + kFatbinHeaderSize);
  wantLen_ = kFatbinHeaderSize;
  if (inputSize < offset || inputSize - offset < kFatbinHeaderSize) fail("truncated: its header runs past the end");
}

void FatbinReader::fail(std::string why) {
  if (c_.complete) return;
  c_.problem = std::move(why);
  c_.complete = true;
}

bool FatbinReader::feed(uint64_t pos, std::string_view bytes) {
  while (!c_.complete) {
    uint64_t next = want_ + buf_.size();  // the next byte wanted
    if (next < pos) {                     // went by unseen: the caller skipped bytes
      fail("its bytes at offset " + std::to_string(next) + " were not read");
      break;
    }
    if (next >= pos + bytes.size()) break;  // in a later block
    size_t take = std::min<uint64_t>(wantLen_ - buf_.size(), pos + bytes.size() - next);
    buf_.append(bytes.substr(next - pos, take));
    if (buf_.size() < wantLen_) break;
    if (inHeader_)
      header();
    else
      entry();
  }
  return !c_.complete;
}

void FatbinReader::header() {
  const std::string_view h = buf_;
  inHeader_ = false;
  if (h.substr(0, 4) != kFatbinMagicBytes) return fail("no fatbin magic");
  uint64_t version = le(h, 4, 2), headerSize = le(h, 6, 2), size = le(h, 8, 8);
  if (version != 1) return fail("version " + std::to_string(version) + ", not 1");
  if (headerSize < kFatbinHeaderSize || headerSize > kMaxEntryHeader)
    return fail("header size " + std::to_string(headerSize));
  uint64_t room = inputSize_ - c_.offset;  // >= 16: checked at construction
  if (headerSize > room || size > room - headerSize) {
    c_.end = inputSize_;
    return fail("declares " + std::to_string(size) + " bytes of entries, past the end of the file (" +
                std::to_string(room - std::min(room, headerSize)) + " left)");
  }
  c_.end = c_.offset + headerSize + size;
  want_ = c_.offset + headerSize;
  buf_.clear();
  if (want_ == c_.end) {
    c_.complete = true;
    return;
  }
  if (c_.end - want_ < kEntryBase) return fail("its entries' " + std::to_string(size) + " bytes hold no entry header");
  wantLen_ = kEntryBase;
}

void FatbinReader::entry() {
  const std::string_view e = buf_;
  const uint64_t at = want_, number = ++c_.entryCount;
  uint64_t kind = le(e, 0, 2), headerSize = le(e, 4, 4), size = le(e, 8, 8), arch = le(e, 28, 4),
           flags = le(e, 40, 8);
  std::string which = "entry " + std::to_string(number) + " (offset " + std::to_string(at) + ")";
  if (headerSize < kEntryBase || headerSize > kMaxEntryHeader)
    return fail(which + ": header size " + std::to_string(headerSize));
  uint64_t room = c_.end - at;
  if (headerSize > room || size > room - headerSize)
    return fail(which + " declares " + std::to_string(size) + " bytes, past its container's end (" +
                std::to_string(room - std::min(room, headerSize)) + " left)");
  FatbinEntry fe;
  fe.kind = kind == 2 ? FatbinEntry::Kind::Sass : kind == 1 ? FatbinEntry::Kind::Ptx : FatbinEntry::Kind::Other;
  if (fe.kind != FatbinEntry::Kind::Other) {
    if (arch < 10 || arch > 999) return fail(which + " names architecture " + std::to_string(arch));
    fe.arch = static_cast<unsigned>(arch);
    fe.variant = (flags & kFlagArchSpecific) ? 'a' : (flags & kFlagFamily) ? 'f' : 0;
  }
  fe.compressed = (flags & (kFlagLz4 | kFlagZstd)) != 0;
  if (std::find(c_.entries.begin(), c_.entries.end(), fe) == c_.entries.end()) {
    if (c_.entries.size() >= kMaxDistinctEntries)
      return fail("more than " + std::to_string(kMaxDistinctEntries) + " distinct kinds of entry");
    c_.entries.push_back(fe);
  }
  want_ = at + headerSize + size;
  buf_.clear();
  if (want_ == c_.end) {
    c_.complete = true;
    return;
  }
  if (c_.end - want_ < kEntryBase)
    return fail("its last " + std::to_string(c_.end - want_) + " bytes, after entry " + std::to_string(number) +
                ", hold no entry header");
}

FatbinContainer FatbinReader::finish() {
  if (!c_.complete) fail("truncated: the input ends inside it");
  return c_;
}

std::vector<FatbinContainer> readFatbins(std::string_view input) {
  std::vector<FatbinContainer> out;
  for (size_t at = input.find(kFatbinMagicBytes); at != std::string_view::npos && out.size() < kMaxContainersRead;
       at = input.find(kFatbinMagicBytes, at + 1)) {
    FatbinReader r(at, input.size());
    r.feed(at, input.substr(at));
    out.push_back(r.finish());
  }
  return out;
}

}  // namespace kernodeck::gpu
