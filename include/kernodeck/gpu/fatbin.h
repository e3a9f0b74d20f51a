// NVIDIA fatbin containers: the GPU code an ELF file's `.nv_fatbin` (or `__nv_relfatbin`) section
// holds, read without decompressing anything. The layout, as NVIDIA's toolkits write it (CUDA
// 11.x to 13.x, checked against nvcc's own output; public descriptions: fatbinary_section.h, the
// open fatbin readers), all little-endian:
//
//   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
//     u64 size of what follows the header (the entries);
//   then entries back to back, each: u16 kind (1 PTX, 2 ELF cubin: SASS), u16 (0x0101),
//     u32 entry header size (64; 80 or 112 since sm_100), u64 payload size (padded), u32 the
//     compressed payload's size, u32, u16 code version minor, u16 major, u32 architecture (90),
//     u32 name offset, u32 name length, u64 flags, u64, u64 the decompressed size; the extended
//     header's bytes; the payload.
//   flags: 0x2000 (LZ4, CUDA 11/12) or 0x8000 (zstd, CUDA 12.8+) compressed; 0x100000 the
//     architecture-specific variant (sm_90a, compute_90a); 0x200000 the family variant (sm_100f).
//
// FatbinReader reads one container as its bytes stream by: it keeps the 16-byte header and one
// entry header at a time (at most kMaxEntryHeader bytes) and skips payloads by arithmetic, so a
// container costs constant memory and time linear in the bytes fed, whatever it declares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::gpu {

inline constexpr std::string_view kFatbinMagicBytes = "\x50\xed\x55\xba";  // 0xBA55ED50, little-endian
inline constexpr size_t kFatbinHeaderSize = 16;
inline constexpr size_t kMaxEntryHeader = 4096;  // larger: malformed (nvcc writes 64 to 112)
inline constexpr size_t kMaxDistinctEntries = 256;  // (kind, architecture, variant, compressed) per container

struct FatbinEntry {
  enum class Kind { Sass, Ptx, Other };
  Kind kind = Kind::Other;
  unsigned arch = 0;  // 90 for sm_90 / compute_90
  char variant = 0;   // 0, 'a' (architecture-specific) or 'f' (family-specific)
  bool compressed = false;
  // As cuobjdump and torch name it: "sm_90a" for SASS, "compute_90" for PTX; "" for Other.
  std::string name() const;
  bool operator==(const FatbinEntry&) const = default;
};

// Orders architecture names as the toolkits list them: by number, then the plain before the
// 'a' and 'f' variants ("sm_80" < "sm_90" < "sm_90a" < "sm_100"); names it cannot read last.
bool archNameLess(std::string_view a, std::string_view b);

struct FatbinContainer {
  uint64_t offset = 0;  // of its header, in the input
  uint64_t end = 0;     // offset + 16 + the size it declares (clamped to the input's size)
  uint64_t entryCount = 0;
  std::vector<FatbinEntry> entries;  // distinct, in the order first seen; at most kMaxDistinctEntries
  std::string problem;               // empty: well-formed to its end
  bool complete = false;             // read to its declared end (or to its problem)
};

// One container, fed the input's bytes from its header on. `inputSize`: the size of the input
// (the file) it lies in, which no declared length may pass.
class FatbinReader {
 public:
  FatbinReader(uint64_t offset, uint64_t inputSize);
  // The input's bytes [pos, pos + bytes.size()), in order and without gaps from the container's
  // offset on (bytes before it are ignored). Returns false once the container is complete.
  bool feed(uint64_t pos, std::string_view bytes);
  // At the end of the input: a container not yet complete is truncated.
  FatbinContainer finish();
  bool complete() const { return c_.complete; }
  uint64_t offset() const { return c_.offset; }

 private:
  void fail(std::string why);
  void header();
  void entry();

  FatbinContainer c_;
  uint64_t inputSize_ = 0;
  uint64_t want_ = 0;     // where the next wanted bytes start
  size_t wantLen_ = 0;    // how many (0: skipping to want_)
  bool inHeader_ = true;  // the wanted bytes are the container header (else an entry header)
  std::string buf_;       // the wanted bytes read so far
};

// Every container that starts at `offset`s where the magic is, in a whole input (a `.fatbin`
// file, a section's bytes): the same reader, fed at once. For tests and the fuzzer.
std::vector<FatbinContainer> readFatbins(std::string_view input);

}  // namespace kernodeck::gpu
