// The bytes of a cuda-compat libcuda.so that reading its `.note.cuda.fwd_compatibility` needs
// (cuda_fwd_note.h), kept as the file streams by once, so that an audit reading a layer (a stream:
// no seeking) holds a few KiB of a library of hundreds of MiB instead of all of it.
//
// Where the note and the section header table lie is known only from the section headers, which
// linkers write at the end, after the sections. So the keeper keeps, whatever the layout: the ELF
// header; the section header table (its place is in the header); every place where the section's
// name appears (the name table entry readFwdCompatNote compares); and 64 KiB on each side of every
// place where NVIDIA's note name appears (the note section, at most 64 KiB, holds that name), with
// 64 KiB of the stream held back for that. readFwdCompatNote then reads the kept bytes at their
// offsets in the file: the same reading as over the whole file, except that a read of bytes not
// kept (a note not named "NVIDIA Corporation", more candidates than the budget) is an error saying
// so, never a different note.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/cuda_fwd_note.h"
#include "kernodeck/util/result.h"

namespace kernodeck::gpu {

class FwdNoteKeeper {
 public:
  // `fileSize`: the size the file's tar entry declares.
  explicit FwdNoteKeeper(uint64_t fileSize);
  // The file's next bytes, in order.
  void feed(const char* data, size_t n);
  // The kept bytes, encoded (kKeptMagic, the file size, then offset, length and bytes of each
  // kept range): what readKeptFwdCompatNote reads.
  std::string finish() const;

 private:
  struct Range {
    uint64_t begin = 0, end = 0;  // wanted: [begin, end) of the file
    std::string bytes;            // kept so far: [begin, begin + bytes.size())
  };
  void want(uint64_t begin, uint64_t end);
  void readHeader(std::string_view head);

  uint64_t size_ = 0, pos_ = 0, keptBudget_ = 0;
  bool headerRead_ = false, overflow_ = false;
  std::string history_;  // the last bytes of the stream: [pos_ - history_.size(), pos_)
  std::vector<Range> ranges_;
};

// The first bytes of FwdNoteKeeper::finish()'s encoding; no ELF file starts with them.
inline constexpr std::string_view kKeptMagic = "kernodeck kept bytes v1\n";

// True when `bytes` is a FwdNoteKeeper encoding rather than a file.
bool isKeptBytes(std::string_view bytes);

// readFwdCompatNote over the kept bytes; an error when the encoding is malformed or the reading
// needs bytes that were not kept.
Result<std::optional<FwdCompatNote>> readKeptFwdCompatNote(std::string_view kept);

}  // namespace kernodeck::gpu
