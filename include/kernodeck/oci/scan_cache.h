// The per-layer result cache: a layer's scan (sizes, digests, entries with their
// hashes and captured files, refused entries) stored by the layer's digest and
// Kernodeck's analysis version, so a second audit of the same image reads no
// layer at all. Only for content-addressed sources (registries), where a digest
// names the bytes for good; a local layout can be edited behind its manifest.
#pragma once

#include <optional>
#include <string>

#include "kernodeck/oci/digest.h"
#include "kernodeck/oci/layer_scan.h"

namespace kernodeck::oci {

// Loads a cached scan; nullopt when absent, from another analysis version, or unreadable.
std::optional<LayerScan> loadScan(const std::string& cacheDir, const Digest& layer);
// Stores a scan (written atomically); only complete, verified scans should be stored.
void storeScan(const std::string& cacheDir, const Digest& layer, const LayerScan& scan);

}  // namespace kernodeck::oci
