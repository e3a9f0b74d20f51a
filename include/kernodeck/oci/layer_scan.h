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

namespace kernodeck::oci {

enum class EntryKind { File, Dir, Symlink, Hardlink, Char, Block, Fifo, Whiteout, Opaque };
const char* toString(EntryKind k);

struct LayerEntry {
  std::string path;        // normalised: relative to the image root, no "./", no trailing '/'
  EntryKind kind = EntryKind::File;
  uint32_t mode = 0;
  int64_t uid = 0, gid = 0;
  int64_t size = 0;
  std::string linkTarget;  // symlink: as written; hardlink: normalised target path
  std::string sha256;      // regular files; empty when not hashed (sparse, oversized)
  std::string md5;         // likewise, for dpkg's md5sums
  std::shared_ptr<const std::string> content;  // captured files only
};

// An entry the walk refused (it would reach outside the image root, or is malformed).
struct UnsafeEntry {
  std::string name;    // as written in the tar, made printable
  std::string reason;
};

struct LayerScan {
  uint64_t compressedSize = 0;
  std::string digestHex;         // of the compressed bytes, in the descriptor's algorithm
  uint64_t uncompressedSize = 0;
  std::string diffIdHex;         // sha256 of the uncompressed tar stream
  Compression detected = Compression::Unknown;
  std::vector<LayerEntry> entries;  // in tar order
  std::vector<UnsafeEntry> unsafe;
  uint64_t fileCount = 0;           // entries other than whiteouts
  std::optional<Error> error;       // set when the stream could not be read to the end
};

enum : unsigned { kHashSha256 = 1, kHashMd5 = 2 };

struct ScanOptions {
  std::string digestAlgorithm = "sha256";
  // Paths (normalised) whose content should be kept in memory: returns the
  // largest size to keep (0: do not keep).
  std::function<uint64_t(const std::string& path)> capture;
  // Which hashes each regular file gets: kHashSha256 (RECORD) and kHashMd5 (dpkg's
  // md5sums) bits; unset: both. A file a guess left unhashed can be hashed later, when a
  // package database asks for it (LayeredView::prepareHashes).
  std::function<unsigned(const std::string& path)> hashes;
  // Entries claiming more than this are not hashed and are reported unsafe.
  uint64_t maxEntryBytes = uint64_t(64) << 30;
};

// Never fails outright: a read or decompression error is stored in `error` and
// the remaining input is still drained into the digest.
LayerScan scanLayer(ByteStream& in, const ScanOptions& opts);

// Normalises a tar entry name. Returns false with a reason for names that are
// absolute or climb with "..".
bool normalizeEntryPath(std::string_view name, std::string& out, std::string& reason);

}  // namespace kernodeck::oci
