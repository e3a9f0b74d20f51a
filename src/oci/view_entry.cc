#include "kernodeck/oci/view_entry.h"

namespace kernodeck::oci {

template <size_t N>
std::string RawDigest<N>::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  if (!set_) return "";
  std::string s(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    s[2 * i] = kDigits[bytes_[i] >> 4];
    s[2 * i + 1] = kDigits[bytes_[i] & 15];
  }
  return s;
}

template <size_t N>
bool RawDigest<N>::assignHex(std::string_view hex) {
  *this = RawDigest();
  if (hex.empty()) return true;
  if (hex.size() != 2 * N) return false;
  auto nibble = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  std::array<unsigned char, N> b{};
  for (size_t i = 0; i < N; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    b[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  assign(b.data());
  return true;
}

template class RawDigest<32>;
template class RawDigest<16>;

const char* toString(EntryKind k) {
  switch (k) {
    case EntryKind::File: return "file";
    case EntryKind::Dir: return "dir";
    case EntryKind::Symlink: return "symlink";
    case EntryKind::Hardlink: return "hardlink";
    case EntryKind::Char: return "char";
    case EntryKind::Block: return "block";
    case EntryKind::Fifo: return "fifo";
    case EntryKind::Whiteout: return "whiteout";
    case EntryKind::Opaque: return "opaque";
  }
  return "?";
}

}  // namespace kernodeck::oci
