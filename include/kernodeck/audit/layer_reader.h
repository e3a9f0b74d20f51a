// How an audit reads its image's layers: several at once, each from the local
// per-layer cache, the shared store (--cache-repo) or its blob, in that order. The
// pipeline (image_audit) then applies the scans in layer order.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/util/result.h"

namespace kernodeck::audit {

// One layer as read: its scan, or why its blob could not be opened.
struct LayerRead {
  std::optional<oci::LayerScan> scan;
  std::optional<Error> openError;
  // A shared entry that was there but not used (unsigned, untrusted, other options, damaged):
  // where it is and why; the layer was walked instead.
  std::string sharedEntry, sharedIgnored;
};

// `so` as it applies to layer `d`: its digest algorithm, and hash-only for an encrypted layer
// (not a tar until decrypted). Every walk of the layer, and every cache key of its scan, uses it.
oci::ScanOptions layerWalkOptions(const oci::ScanOptions& so, const oci::Descriptor& d);

// Reads `layers` of `source` with `workers` threads (the caller's among them), each scanned
// with `so` (its digest algorithm and hash-only mode set per layer). A scan read from the blob
// is kept in the source's cache, and in `shared` when given, only when it is complete and its
// bytes matched the descriptor. A shared result is used, never copied into the local cache
// (what it can be trusted for depends on the keys each audit trusts). Each layer's result goes to `use` on the calling
// thread, in layer order, as soon as it and those before it are read, and is dropped after: a big image's scans are not
// all held at once (issue 19); no worker reads more than `workers` layers ahead of the one being used.
void readLayers(oci::ImageSource& source, const std::vector<oci::Descriptor>& layers, const oci::ScanOptions& so,
                unsigned workers, oci::SharedScanStore* shared,
                const std::function<void(size_t index, LayerRead& read)>& use);

// Reads layer `d` again for the files in `paths` its walk left unhashed (the hash policy
// guessed that no package database would ask for them): SHA-256, MD5 and SHA-1 of each, also
// written into the layer's cached scan (the one its walk under `so` keeps). Empty when the bytes
// cannot be read or do not match.
std::map<std::string, oci::LayeredView::FileHashes> rehashLayer(oci::ImageSource& source, const oci::Descriptor& d,
                                                                const oci::ScanOptions& so,
                                                                const std::set<std::string>& paths);

}  // namespace kernodeck::audit
