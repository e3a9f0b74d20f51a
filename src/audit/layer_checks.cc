// The findings of one layer of an image that the pipeline's layer walk adds: its blob against
// its descriptor (size, digest) and its uncompressed bytes against the config's DiffID, the
// media type against what was read, and the tar entries refused or suspicious.
#include "kernodeck/audit/layer_checks.h"

namespace kernodeck::audit {

using report::Severity;

namespace {

// What a DiffID mismatch of a zstd:chunked layer adds: the layer is still refused, as containerd
// refuses it, but the user learns the likely cause.
constexpr const char* kZstdChunkedBug =
    "; the layer is zstd:chunked (its descriptor carries a zstd-chunked manifest annotation): podman 4.3's "
    "zstd:chunked writer is known to leave out the tar's end padding, so the layer's bytes no longer hash to "
    "its DiffID (containerd refuses such layers too); push the image again with a newer podman, or gzip";

// A layer descriptor as containers/storage annotates a zstd:chunked layer (io.containers... in
// podman 4, io.github.containers... later).
bool zstdChunked(const oci::Descriptor& d) {
  for (const auto& [k, v] : d.annotations)
    if (k.find("zstd-chunked.manifest-checksum") != std::string::npos) return true;
  return false;
}

}  // namespace

void verifyLayer(report::Report& r, const oci::ImageSource& source, const std::vector<oci::Digest>& diffIds,
                 std::set<std::string>& unverifiable, const oci::Descriptor& d, size_t i, const std::string& layerName,
                 const oci::LayerScan& scan) {
  std::map<std::string, std::string> ev = {{"layer", layerName}, {"digest", d.digest.str()}, {"path", source.where(d)}};
  if (static_cast<int64_t>(scan.compressedSize) != d.size) {
    r.add("blob.digest.mismatch", Severity::Error,
          "layer blob has " + std::to_string(scan.compressedSize) + " bytes, its descriptor says " +
              std::to_string(d.size),
          ev);
  } else if (!d.digest.verifiable()) {
    // reported by the layer walk
  } else if (source.synthetic()) {
    // A legacy docker-archive names each layer by its DiffID: checked below, after inflating.
  } else if (scan.digestHex != d.digest.encoded && !scan.digestHex.empty()) {  // empty: the stream failed first
    r.add("blob.digest.mismatch", Severity::Error,
          "layer bytes hash to " + d.digest.algorithm + ":" + scan.digestHex + ", not " + d.digest.str(), ev);
  }
  if (scan.error || oci::encryptedLayer(d.mediaType)) return;  // no DiffID: unread, or still encrypted
  const oci::Digest& want = diffIds[i];
  if (want.algorithm != "sha256") {
    if (unverifiable.insert(want.str()).second)
      r.add("blob.digest.unverifiable", Severity::Error,
            "the config's diff_id " + want.str() + " for layer " + layerName +
                " uses an algorithm other than sha256, "
                "which DiffIDs must use",
            {{"digest", want.str()}, {"blob", "diff_id"}, {"layer", layerName}});
  } else if (want.encoded != scan.diffIdHex) {
    ev["kind"] = "diff_id";
    r.add("blob.digest.mismatch", Severity::Error,
          "uncompressed layer hashes to sha256:" + scan.diffIdHex + ", but the config's diff_id is " + want.str() +
              (zstdChunked(d) ? std::string(kZstdChunkedBug) : std::string()),
          ev);
  }
}

void scanFindings(report::Report& r, oci::Compression declared, const oci::LayerScan& scan,
                  const std::string& layerName) {
  if (declared != oci::Compression::Unknown && scan.detected != oci::Compression::Unknown &&
      declared != scan.detected && !scan.error)
    r.add(
        "layer.mediatype.mismatch", Severity::Warning,
        std::string("layer is ") + oci::toString(scan.detected) + " but its media type says " + oci::toString(declared),
        {{"layer", layerName}});
  for (const auto& u : scan.unsafe)
    r.add("layer.path.unsafe", Severity::Error, "refused tar entry '" + u.name + "': " + u.reason,
          {{"layer", layerName}, {"path", u.name}});
}

void viewFindings(report::Report& r, const std::vector<oci::UnsafeEntry>& refused,
                  const std::vector<oci::UnsafeEntry>& suspicious, const std::string& layerName) {
  for (const auto& u : refused)
    r.add("layer.path.unsafe", Severity::Error, "refused tar entry '" + u.name + "': " + u.reason,
          {{"layer", layerName}, {"path", u.name}});
  for (const auto& u : suspicious)
    r.add("layer.path.suspicious", Severity::Warning, "tar entry '" + u.name + "': " + u.reason,
          {{"layer", layerName}, {"path", u.name}});
}

}  // namespace kernodeck::audit
