// One pass over a layer blob: the compressed bytes are counted and hashed
// (the blob digest) while they are inflated, the uncompressed stream is hashed
// (the DiffID) while libarchive parses the tar, and every regular file is
// hashed (sha256) in the same pass; files the caller asks for are captured.
// Nothing is written to disk and memory stays bounded whatever the layer size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/oci/source.h"
#include "kernodeck/oci/view_entry.h"

namespace kernodeck::oci {

struct LayerScan {
  uint64_t compressedSize = 0;
  std::string digestHex;  // of the compressed bytes, in the descriptor's algorithm
  uint64_t uncompressedSize = 0;
  std::string diffIdHex;  // sha256 of the uncompressed tar stream
  Compression detected = Compression::Unknown;
  std::vector<LayerEntry> entries;      // in tar order (view_entry.h)
  std::vector<UnsafeEntry> unsafe;      // refused: not in `entries`
  std::vector<UnsafeEntry> suspicious;  // in `entries`, but no build tool writes them
  uint64_t fileCount = 0;               // entries other than whiteouts
  std::optional<Error> error;           // set when the stream could not be read to the end
};

enum : unsigned { kHashSha256 = 1, kHashMd5 = 2, kHashSha1 = 4 };

// A file kept in part: fed the file's bytes in order as they stream by, it returns what to capture
// as the entry's content (an encoding of its own, which the file's reader knows; not the file).
class PartialCapture {
 public:
  virtual ~PartialCapture() = default;
  virtual void feed(const char* data, size_t n) = 0;
  virtual std::string finish() = 0;
};

struct ScanOptions {
  std::string digestAlgorithm = "sha256";
  // Paths (normalised) whose content should be kept in memory: returns the
  // largest size to keep (0: do not keep).
  std::function<uint64_t(const std::string& path)> capture;
  // Files too large to keep whole whose readers need a few of their bytes (a cuda-compat
  // libcuda.so's ELF note): for a path and the size its entry declares, a PartialCapture, or
  // nullptr. Takes precedence over `capture`; what it returns counts as captured bytes.
  std::function<std::unique_ptr<PartialCapture>(const std::string& path, uint64_t size)> partial;
  // Which hashes each regular file gets: kHashSha256 (RECORD), kHashMd5 (dpkg's md5sums) and
  // kHashSha1 (apk's Q1 checksums) bits; unset: sha256 and md5. A file a guess left unhashed can be hashed later, when
  // a package database asks for it (LayeredView::prepareHashes).
  std::function<unsigned(const std::string& path)> hashes;
  // Only count and hash the blob (an encrypted layer, an artifact's blob): no tar is read.
  bool hashOnly = false;
  // Entries claiming more than this are not hashed and are reported unsafe.
  uint64_t maxEntryBytes = uint64_t(64) << 30;
  // The name of the capture and hash policies above (functions cannot be compared): a stored
  // scan is used only by a walk under the same name (scan_cache.h, scanOptionsJson).
  std::string policy;
  // What one layer may make the scan hold, whatever it inflates to: past either bound the scan
  // stops with `error` set (the layer is not analysed, the audit does not pass). A gzip layer
  // expands up to a thousandfold, so captured bytes and entries are bounded here, not by its size.
  uint64_t maxEntries = uint64_t(1) << 22;
  uint64_t maxCapturedBytes = uint64_t(1) << 30;
};

// Never fails outright: a read or decompression error is stored in `error` and
// the remaining input is still drained into the digest.
LayerScan scanLayer(ByteStream& in, const ScanOptions& opts);

// Cleans a tar entry name as containerd's applier does (Go's filepath.Clean, then the name is
// joined to the root, so a leading '/' and any '..' that would climb above it stop at the root):
// "/../etc/passwd" is "etc/passwd", "a/../b" is "b", "/" and "./" are "" (the root). `note` says
// why the name is not one a build tool writes ("absolute path", "'..' in the path"), else empty.
std::string cleanEntryPath(std::string_view name, std::string& note);

}  // namespace kernodeck::oci
