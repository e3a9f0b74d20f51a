// Where image bytes come from. An ImageSource resolves a reference to the
// top-level descriptor (a manifest or an index) and opens blobs by descriptor;
// it never verifies: callers hash what they read and compare with the
// descriptor (audit/image_audit.cc for blobs, oci/layer_scan.h for layers).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::oci {

// A pull-based byte stream. read() returns 0 at the end.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  virtual Result<size_t> read(void* buf, size_t n) = 0;
  // A stream that hashes what it delivers (a registry blob, verified as it arrives) says so
  // here, and gives the digest of every byte once read() has returned 0; a reader then
  // need not hash the same bytes again.
  virtual bool computesDigest(const std::string& algorithm) const { return false; }
  virtual std::optional<std::string> digestHex() const { return std::nullopt; }
};

// A stream over bytes held in memory.
class MemoryStream : public ByteStream {
 public:
  explicit MemoryStream(std::string bytes) : s_(std::move(bytes)) {}
  Result<size_t> read(void* buf, size_t n) override;

 private:
  std::string s_;
  size_t pos_ = 0;
};

// Reads a whole stream, failing once more than `limit` bytes arrive.
Result<std::string> readAll(ByteStream& s, uint64_t limit, const std::string& what);

// Named files of an image layout: a directory or a tar archive holding one.
class FileAccess {
 public:
  virtual ~FileAccess() = default;
  virtual bool exists(const std::string& name) = 0;
  virtual Result<std::unique_ptr<ByteStream>> open(const std::string& name) = 0;
  // Size in bytes of a member (after following links), -1 when missing.
  virtual int64_t size(const std::string& name) = 0;
  // Where `name` lives, for messages ("archive.tar:blobs/sha256/..").
  virtual std::string where(const std::string& name) const = 0;
  Result<std::string> read(const std::string& name, uint64_t limit);
};

std::unique_ptr<FileAccess> openDirAccess(const std::string& dir);
// Indexes the archive's members once (headers only); each open() streams one member.
Result<std::unique_ptr<FileAccess>> openTarAccess(const std::string& file);

// A problem a source found while resolving (a layout's own files), for the report.
struct SourceFinding {
  std::string code;
  std::string severity;  // "error", "warning", "info"
  std::string message;
  std::map<std::string, std::string> evidence;
};

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // The descriptor the reference names: by digest, by tag, or the only image there.
  virtual Result<Descriptor> resolve() = 0;
  virtual Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) = 0;
  // Human name of the blob's location, for findings and errors.
  virtual std::string where(const Descriptor& d) const = 0;
  // True when the manifest was synthesised from a legacy docker-archive manifest.json:
  // it has no digest of its own and its layer digests are the DiffIDs.
  virtual bool synthetic() const { return false; }
  // The tag the reference resolved through, if any (for image.tag.mutable).
  virtual std::string tag() const { return {}; }
  // Where per-layer results may be cached: only for sources that fetch blobs by digest
  // and verify them (registries); empty for local layouts and archives.
  virtual std::string scanCacheDir() const { return {}; }
  // Findings about the source's own files, known once resolve() has run.
  virtual std::vector<SourceFinding> findings() const { return {}; }
};

// Opens a local image (oci, oci-archive, docker-archive, skopeo's dir). Root filesystems
// (rootfs:) and registry references are not image sources here.
Result<std::unique_ptr<ImageSource>> openImageSource(const ImageRef& ref);

// skopeo's directory format (dir:PATH): manifest.json and blobs named by their digest.
std::unique_ptr<ImageSource> openSkopeoDir(const std::string& dir);

}  // namespace kernodeck::oci
