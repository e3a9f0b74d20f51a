// A test library carrying a `.note.cuda.fwd_compatibility` note with NVIDIA's documented layout
// (a 64-bit little-endian ELF shared object: the note section, a section name table, section
// headers), made by the test so that no NVIDIA binary is needed.
#pragma once

#include <cstdint>
#include <string>

namespace kdktest {

inline void putLe(std::string& b, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// DESCRIPTION is the note's JSON, e.g. {"format":1,"CUDA version":"12.9","driver":[535,550]};
// MACHINE the ELF e_machine (0x3e x86-64, 0xb7 aarch64: cuda-compat for arm64 SBSA).
inline std::string elfWithFwdCompatNote(const std::string& description, const std::string& owner = "NVIDIA Corporation",
                                        uint16_t machine = 0x3e) {
  auto pad4 = [](std::string s) {
    while (s.size() % 4) s.push_back('\0');
    return s;
  };
  std::string note(12, '\0');
  putLe(note, 0, owner.size() + 1, 4);
  putLe(note, 4, description.size() + 1, 4);
  putLe(note, 8, 0, 4);
  note += pad4(owner + std::string(1, '\0')) + pad4(description + std::string(1, '\0'));
  // The section names, NUL-separated. Written as one literal: GCC 12 reports a false
  // -Warray-bounds on the equivalent chain of std::string + (with the tests' precompiled header).
  static constexpr char kNames[] = "\0.note.cuda.fwd_compatibility\0.shstrtab";
  std::string names(kNames, sizeof kNames);  // the literal's own NUL ends the last name
  size_t noteOff = 64, namesOff = noteOff + note.size(), shOff = (namesOff + names.size() + 7) / 8 * 8;
  std::string b(shOff + 3 * 64, '\0');
  b.replace(0, 4,
            "\x7f"
            "ELF");
  b[4] = 2;  // 64-bit
  b[5] = 1;  // little-endian
  b[6] = 1;
  putLe(b, 16, 3, 2);        // ET_DYN
  putLe(b, 18, machine, 2);  // e_machine
  putLe(b, 20, 1, 4);
  putLe(b, 0x28, shOff, 8);
  putLe(b, 0x34, 64, 2);  // e_ehsize
  putLe(b, 0x3A, 64, 2);  // e_shentsize
  putLe(b, 0x3C, 3, 2);   // e_shnum
  putLe(b, 0x3E, 2, 2);   // e_shstrndx
  b.replace(noteOff, note.size(), note);
  b.replace(namesOff, names.size(), names);
  auto section = [&](size_t i, uint32_t name, uint32_t type, uint64_t flags, uint64_t off, uint64_t size,
                     uint64_t align) {
    size_t at = shOff + i * 64;
    putLe(b, at, name, 4);
    putLe(b, at + 4, type, 4);
    putLe(b, at + 8, flags, 8);
    putLe(b, at + 24, off, 8);
    putLe(b, at + 32, size, 8);
    putLe(b, at + 48, align, 8);
  };
  section(1, 1, 7 /* SHT_NOTE */, 2 /* SHF_ALLOC */, noteOff, note.size(), 4);
  section(2, 30, 3 /* SHT_STRTAB */, 0, namesOff, names.size(), 1);
  return b;
}

}  // namespace kdktest
