// The per-layer result cache: a layer's scan (sizes, digests, entries with their
// hashes and captured files, refused entries) stored by the layer's digest and
// Kernodeck's analysis version, so a second audit of the same image reads no
// layer at all. Only for content-addressed sources (registries), where a digest
// names the bytes for good; a local layout can be edited behind its manifest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernodeck/oci/digest.h"
#include "kernodeck/oci/layer_scan.h"

namespace kernodeck::oci {

// What a scan made under `opts` depends on besides the layer's bytes, Kernodeck's analysis version
// and the scan format: the policy's name, hash-only (an encrypted layer's walk reads no tar, so
// its scan lists no file) and the entry size bound. A stored scan is used only by a walk whose
// options give the same object: a scan is keyed by it locally and signed with it when shared.
nlohmann::json scanOptionsJson(const ScanOptions& opts);

// Loads a cached scan made under `opts`; nullopt when absent, from another analysis version or
// options, or unreadable.
std::optional<LayerScan> loadScan(const std::string& cacheDir, const Digest& layer, const ScanOptions& opts = {});
// Stores a scan made under `opts` (written atomically); only complete, verified scans should be stored.
void storeScan(const std::string& cacheDir, const Digest& layer, const LayerScan& scan, const ScanOptions& opts = {});

// The entry's bytes for a scan, and back: what the local cache stores and what a shared store
// (a registry repository, --cache-repo) holds. decodeScan() refuses a torn entry or one of another layer.
std::string encodeScan(const Digest& layer, const LayerScan& scan);
std::optional<LayerScan> decodeScan(std::string_view text, const Digest& layer);

// What a shared store gave for a layer: a scan it vouches for, or why an entry that is there
// was not used (unsigned, signed by no trusted key, made under other options, damaged).
struct SharedScan {
  std::optional<LayerScan> scan;
  std::string entry;    // where the entry is (REGISTRY/REPO:TAG), for findings
  std::string ignored;  // why it was not used; empty when used or when there is none
};

// Layer results kept beyond this machine, so that workers share the walk of a layer: looked
// up before a layer is walked, given every complete walk. Every entry is untrusted input: only
// one signed by a key the reader trusts, naming the layer, the analysis version and the
// options the reader would walk it with (`opts`), counts. Implementations never fail loudly:
// anything else is a miss with its reason (the walk's result then replaces it). Thread-safe.
class SharedScanStore {
 public:
  virtual ~SharedScanStore() = default;
  virtual SharedScan load(const Descriptor& layer, const ScanOptions& opts) = 0;
  // Shares a scan made under `opts`, signed; does nothing when this store has no signing key.
  virtual void store(const Descriptor& layer, const ScanOptions& opts, const LayerScan& scan) = 0;
  // Whether a result this reader would use is there, without reading it all.
  virtual bool has(const Descriptor& layer, const ScanOptions& opts) { return load(layer, opts).scan.has_value(); }
  // What results read from this store depend on (the repository and the trusted keys): part of
  // the key of a whole audit's stored result, so one made under other trust is not replayed.
  virtual std::string trustId() const = 0;
};

}  // namespace kernodeck::oci
