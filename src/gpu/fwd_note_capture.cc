// See fwd_note_capture.h.
#include "kernodeck/gpu/fwd_note_capture.h"

#include <algorithm>

#include "elf_header.h"

namespace kernodeck::gpu {

namespace {

constexpr std::string_view kSectionName = ".note.cuda.fwd_compatibility";
constexpr std::string_view kNoteOwner = "NVIDIA Corporation";
constexpr uint64_t kNoteReach = 64 * 1024;  // the largest note section readFwdCompatNote reads
// What the stream holds back: a note section starts at most kNoteReach before its owner's name.
constexpr size_t kHistory = kNoteReach + 64;
constexpr uint64_t kCandidateBudget = uint64_t(4) << 20;  // kept around names, all together
constexpr size_t kMaxRanges = 4096;

void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

FwdNoteKeeper::FwdNoteKeeper(uint64_t fileSize) : size_(fileSize) { want(0, 64); }

void FwdNoteKeeper::want(uint64_t begin, uint64_t end) {
  end = std::min(end, size_);
  if (begin >= end) return;
  for (auto& r : ranges_)
    if (r.begin <= begin && begin <= r.end) {
      r.end = std::max(r.end, end);
      return;
    }
  if (ranges_.size() >= kMaxRanges) {
    overflow_ = true;
    return;
  }
  ranges_.push_back({begin, end, {}});
}

void FwdNoteKeeper::readHeader(std::string_view h) {
  headerRead_ = true;
  auto e = elf::readHeader(h);  // the table's size bounded as readFwdCompatNote bounds it
  if (e && e->sectionTableSize() <= elf::kMaxSectionTable && e->shoff <= size_)
    want(e->shoff, e->shoff + e->sectionTableSize());
}

void FwdNoteKeeper::feed(const char* data, size_t n) {
  std::string_view block(data, n);
  const uint64_t histStart = pos_ - history_.size();
  // The bytes [from, to) of the file, from the history and this block.
  auto copy = [&](std::string& out, uint64_t from, uint64_t to) {
    if (from < pos_) {
      uint64_t upto = std::min(to, pos_);
      out.append(history_, from - histStart, upto - from);
      from = upto;
    }
    if (from < to) out.append(block.substr(from - pos_, to - from));
  };
  if (!headerRead_ && pos_ + n >= std::min<uint64_t>(64, size_)) {
    std::string head;
    copy(head, 0, std::min<uint64_t>(64, pos_ + n));
    if (head.size() >= 64) readHeader(head);
  }
  // Names that end in this block: searched in the block and across its start.
  for (std::string_view pattern : {kSectionName, kNoteOwner}) {
    std::string edge;
    uint64_t edgeStart = pos_ - std::min<uint64_t>(history_.size(), pattern.size() - 1);
    copy(edge, edgeStart, pos_ + std::min<size_t>(n, pattern.size() - 1));
    auto scan = [&](std::string_view where, uint64_t at, bool inEdge) {
      for (size_t i = where.find(pattern); i != std::string_view::npos; i = where.find(pattern, i + 1)) {
        uint64_t q = at + i;
        if (inEdge && q >= pos_) continue;  // wholly in the block: the block's search finds it
        if (pattern == kSectionName) {
          want(q, q + pattern.size() + 1);
        } else {
          uint64_t begin = q > kNoteReach ? q - kNoteReach : 0, end = q + kNoteReach;
          if (keptBudget_ + (end - begin) > kCandidateBudget) {
            overflow_ = true;
            continue;
          }
          keptBudget_ += end - begin;
          want(begin, end);
        }
      }
    };
    scan(edge, edgeStart, true);
    scan(block, pos_, false);
  }
  for (auto& r : ranges_) {
    uint64_t from = r.begin + r.bytes.size(), to = std::min(r.end, pos_ + n);
    if (from < histStart || from >= to) continue;  // done, or its start went by (never, see kHistory)
    copy(r.bytes, from, to);
  }
  history_.append(block);
  pos_ += n;
  if (history_.size() > 2 * kHistory) history_.erase(0, history_.size() - kHistory);
}

std::string FwdNoteKeeper::finish() const {
  std::string out(kKeptMagic);
  putU64(out, size_);
  putU64(out, ranges_.size());
  for (const auto& r : ranges_) {
    putU64(out, r.begin);
    putU64(out, r.bytes.size());
    out += r.bytes;
  }
  return out;
}

bool isKeptBytes(std::string_view bytes) { return bytes.starts_with(kKeptMagic); }

Result<std::optional<FwdCompatNote>> readKeptFwdCompatNote(std::string_view kept) {
  if (!isKeptBytes(kept)) return Error::Invalid("not the kept bytes of a library");
  std::string_view b = kept.substr(kKeptMagic.size());
  auto take = [&](uint64_t& v) {
    if (b.size() < 8) return false;
    v = elf::readInt(b, 0, 8, true);
    b.remove_prefix(8);
    return true;
  };
  uint64_t size = 0, count = 0;
  if (!take(size) || !take(count)) return Error::Invalid("the kept bytes of the library are truncated");
  struct Kept {
    uint64_t begin;
    std::string_view bytes;
  };
  std::vector<Kept> ranges;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t begin = 0, len = 0;
    if (!take(begin) || !take(len) || len > b.size())
      return Error::Invalid("the kept bytes of the library are truncated");
    ranges.push_back({begin, b.substr(0, len)});
    b.remove_prefix(len);
  }
  bool missed = false;
  auto read = [&](uint64_t offset, size_t len) -> std::string {
    if (offset >= size) return "";
    uint64_t n = std::min<uint64_t>(len, size - offset);
    for (const auto& r : ranges)
      if (r.begin <= offset && offset - r.begin <= r.bytes.size() && n <= r.bytes.size() - (offset - r.begin))
        return std::string(r.bytes.substr(offset - r.begin, n));
    missed = true;
    return "";
  };
  auto note = readFwdCompatNote(read);
  if (!note.ok() && missed)
    return Error::Invalid(note.error().message +
                          " (reading it needs bytes the audit did not keep: a note section without NVIDIA's name "
                          "within 64 KiB, or more candidate places than the audit keeps)");
  return note;
}

}  // namespace kernodeck::gpu
