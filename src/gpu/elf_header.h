// What the gpu module's streaming readers of ELF files (gpu_code_scan.cc's fatbin scanner,
// fwd_note_capture.cc's note keeper) read of an ELF file header: its class, byte order and where
// the section header table lies. One reading, so the two cannot differ on a hostile header.
// cuda_fwd_note.cc reads whole files with bounds checks of its own (its Decoder).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kernodeck::gpu::elf {

inline constexpr size_t kHeaderSize = 64;                           // ELF64's; ELF32's is 52
inline constexpr uint64_t kMaxSectionTable = uint64_t(65535) * 64;  // e_shnum x the largest e_shentsize

// The unsigned integer of `width` bytes (at most 8) at `at` in `b`, in the file's byte order.
// The caller has checked that `at + width <= b.size()`.
inline uint64_t readInt(std::string_view b, size_t at, size_t width, bool little) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + (little ? width - 1 - i : i)]);
  return v;
}

struct Header {
  bool is64 = false, little = false;
  uint64_t shoff = 0, shentsize = 0, shnum = 0, shstrndx = 0;
  uint64_t sectionTableSize() const { return shentsize * shnum; }  // both 16-bit: no overflow
};

// The header of the file whose first bytes are `head`; none when they are fewer than
// kHeaderSize, not ELF, or of a class or byte order ELF does not define.
inline std::optional<Header> readHeader(std::string_view head) {
  if (head.size() < kHeaderSize || head.substr(0, 4) != "\177ELF") return std::nullopt;
  if ((head[4] != 1 && head[4] != 2) || (head[5] != 1 && head[5] != 2)) return std::nullopt;
  Header h;
  h.is64 = head[4] == 2;
  h.little = head[5] == 1;
  h.shoff = h.is64 ? readInt(head, 0x28, 8, h.little) : readInt(head, 0x20, 4, h.little);
  h.shentsize = readInt(head, h.is64 ? 0x3A : 0x2E, 2, h.little);
  h.shnum = readInt(head, h.is64 ? 0x3C : 0x30, 2, h.little);
  h.shstrndx = readInt(head, h.is64 ? 0x3E : 0x32, 2, h.little);
  return h;
}

}  // namespace kernodeck::gpu::elf
