// The NVIDIA GPU code of one ELF file (a shared object, an executable), read as the file streams
// by once: an audit reads a layer as a stream (no seeking, no unpacking to disk), and a library
// such as libcublasLt.so.11 is 575 MB, so nothing is held but a few headers.
//
// Where the fatbins lie is known only from the section header table, which linkers write at the
// end of the file, after the sections. So the scanner, whatever the layout:
//  - starts a FatbinReader (fatbin.h) at every place the fatbin magic appears (at most
//    kMaxOpenContainers at once: a container's payloads are skipped, never kept);
//  - keeps the ELF header, the section header table (its place is in the header; at most 4 MiB)
//    and the offsets where the section names ".nv_fatbin" and "__nv_relfatbin" appear (the
//    section name table is one of those places);
//  - at the end, reads the section table and keeps the containers that cuobjdump reads: those in
//    a section named `.nv_fatbin` or `__nv_relfatbin`, in order, each after the end of the one
//    before; a malformed one there (a length past its section or the file, a bad entry header)
//    is a problem the audit reports. A container elsewhere (another section holding fatbins, or
//    a file without a section table) counts only when it is well-formed to its end: four magic
//    bytes in code or data by chance are not GPU code.
// Cost: one pass over the bytes of an ELF file looking for both patterns sixteen bytes at a time
// (about 7 GB/s), nothing for any other file (its first four bytes say it is not ELF); memory: the
// headers, one record per container (at most kMaxContainers), whatever the file declares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/fatbin.h"
#include "kernodeck/util/result.h"

namespace kernodeck::gpu {

inline constexpr size_t kMaxOpenContainers = 16;
inline constexpr size_t kMaxContainers = 65536;
inline constexpr size_t kMaxGpuCodeProblems = 8;

// What one file's fatbins carry.
struct FileGpuCode {
  std::vector<std::string> sass, ptx;  // "sm_90a" / "compute_90": distinct, in archNameLess order
  bool compressed = false;             // some entry's payload is compressed
  uint64_t containers = 0, entries = 0;
  std::vector<std::string> problems;  // malformed fatbins where cuobjdump reads them; at most kMaxGpuCodeProblems
  bool empty() const { return containers == 0 && problems.empty(); }
};

class GpuCodeScanner {
 public:
  // `fileSize`: the size the file's tar entry declares.
  explicit GpuCodeScanner(uint64_t fileSize);
  // The file's next bytes, in order.
  void feed(const char* data, size_t n);
  // False once the first bytes said the file is not ELF: the rest is not looked at.
  bool elf() const { return state_ != State::NotElf; }
  FileGpuCode finish();

 private:
  enum class State { Start, Elf, NotElf };
  struct NamePlace {
    uint64_t offset;
    bool relocatable;  // "__nv_relfatbin", else ".nv_fatbin"
  };
  void readElfHeader();
  void startContainer(uint64_t at, uint64_t windowStart, std::string_view window);
  void retire();

  uint64_t size_ = 0, pos_ = 0;
  State state_ = State::Start;
  std::string head_;                    // the first 64 bytes
  uint64_t shtBegin_ = 0, shtEnd_ = 0;  // the section header table, when the header gives one
  std::string sht_;
  std::string tail_;  // the stream's last bytes (names and magic across a block's start)
  std::vector<FatbinReader> open_;
  std::vector<FatbinContainer> done_;
  std::vector<NamePlace> names_;
  bool tooManyOpen_ = false, tooManyContainers_ = false, tooManyNames_ = false;
};

// The scanner over a whole file held in memory.
FileGpuCode scanGpuCode(std::string_view file);

// What the audit keeps of a file with GPU code, in place of its bytes (the layer walk's partial
// capture; a view's readFile returns it): kGpuCodeMagic, then the FileGpuCode as JSON.
inline constexpr std::string_view kGpuCodeMagic = "kernodeck gpu code v1\n";
std::string encodeGpuCode(const FileGpuCode& code);
bool isGpuCodeBytes(std::string_view bytes);
Result<FileGpuCode> decodeGpuCode(std::string_view bytes);

}  // namespace kernodeck::gpu
