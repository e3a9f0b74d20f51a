// The per-layer result cache: a layer's scan (sizes, digests, entries with their
// hashes and captured files, refused entries) stored by the layer's digest and
// Kernodeck's analysis version, so a second audit of the same image reads no
// layer at all. Only for content-addressed sources (registries), where a digest
// names the bytes for good; a local layout can be edited behind its manifest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernodeck/oci/digest.h"
#include "kernodeck/oci/layer_scan.h"

namespace kernodeck::oci {

// Loads a cached scan; nullopt when absent, from another analysis version, or unreadable.
std::optional<LayerScan> loadScan(const std::string& cacheDir, const Digest& layer);
// Stores a scan (written atomically); only complete, verified scans should be stored.
void storeScan(const std::string& cacheDir, const Digest& layer, const LayerScan& scan);

// The entry's bytes for a scan, and back: what the local cache stores and what a shared store
// (a registry repository, --cache-repo) holds. decodeScan() refuses a torn entry or one of another layer.
std::string encodeScan(const Digest& layer, const LayerScan& scan);
std::optional<LayerScan> decodeScan(std::string_view text, const Digest& layer);

// Layer results kept beyond this machine, so that workers share the walk of a layer: looked
// up before a layer is walked, given every complete walk. Implementations never fail loudly:
// a damaged or foreign entry is a miss (the walk's result then replaces it). Thread-safe.
class SharedScanStore {
 public:
  virtual ~SharedScanStore() = default;
  virtual std::optional<LayerScan> load(const Descriptor& layer) = 0;
  virtual void store(const Descriptor& layer, const LayerScan& scan) = 0;
  // Whether a result is there, without reading it all (it may still turn out damaged).
  virtual bool has(const Descriptor& layer) { return load(layer).has_value(); }
};

}  // namespace kernodeck::oci
