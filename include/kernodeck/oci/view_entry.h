// What a filesystem view is built from and reports: the kinds of entry, one entry of a layer
// as the view applies it, and an entry refused or flagged. Owned by oci_view (the views), so
// that the view's header needs nothing of the image library (oci), whose layer walk
// (layer_scan.h) produces these entries.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kernodeck::oci {

enum class EntryKind { File, Dir, Symlink, Hardlink, Char, Block, Fifo, Whiteout, Opaque };
const char* toString(EntryKind k);

// A file's digest as its N raw bytes, or none (not hashed). The layer walk holds one per file of
// every layer read and not yet applied: as a hex string it was 2N characters more on the heap
// each (at 200,000 files, most of the memory of the entries waiting to be applied).
template <size_t N>
class RawDigest {
 public:
  bool empty() const { return !set_; }
  // Lowercase hex; "" when empty.
  std::string hex() const;
  // Takes 2N lowercase hex digits. Anything else leaves it empty and returns false ("" is
  // empty and true: no digest).
  bool assignHex(std::string_view hex);
  void assign(const unsigned char* raw) {
    for (size_t i = 0; i < N; ++i) bytes_[i] = raw[i];
    set_ = true;
  }
  // The N raw bytes (unspecified when empty): for a store that keeps them as bytes too.
  const unsigned char* data() const { return bytes_.data(); }
  bool operator==(const RawDigest&) const = default;

 private:
  std::array<unsigned char, N> bytes_{};
  bool set_ = false;
};
using Sha256Digest = RawDigest<32>;
using Md5Digest = RawDigest<16>;
extern template class RawDigest<32>;
extern template class RawDigest<16>;

struct LayerEntry {
  // Cleaned as containerd's applier cleans it (cleanEntryPath): relative to the image root, no
  // "./", no trailing '/', no '..'. Symlinks among its parents are resolved when the entry is
  // applied to a view (LayeredView::apply), so this is where it lands only when there are none.
  std::string path;
  EntryKind kind = EntryKind::File;
  uint32_t mode = 0;
  int64_t uid = 0, gid = 0;
  int64_t size = 0;
  std::string linkTarget;  // symlink and hardlink: as written (a hardlink's is resolved when applied)
  Sha256Digest sha256;     // regular files; empty when not hashed (sparse, oversized)
  Md5Digest md5;           // likewise, for dpkg's md5sums
  std::string sha1;        // likewise, for apk's Q1 checksums (only when asked for)
  std::shared_ptr<const std::string> content;  // captured files only
};

// An entry the walk refused (a runtime would reject it: the layer would not unpack), or one it
// applied but that no build tool writes (an absolute or '..' name, a write through a symlink).
struct UnsafeEntry {
  std::string name;  // as written in the tar, made printable
  std::string reason;
};

}  // namespace kernodeck::oci
