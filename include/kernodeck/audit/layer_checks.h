// The findings of one layer of an image, added by the audit's layer walk (image_audit.cc) as
// each layer is read: pure functions of the descriptor, the scan and the view's verdicts.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

// Layer i's blob against its descriptor (size; digest, unless the digest is unverifiable or the
// source synthesised it) and, once read, its uncompressed bytes against diffIds[i]: each
// mismatch a blob.digest.mismatch, a DiffID of another algorithm than sha256 a
// blob.digest.unverifiable (once per digest: `unverifiable` holds those already reported).
void verifyLayer(report::Report& r, const oci::ImageSource& source, const std::vector<oci::Digest>& diffIds,
                 std::set<std::string>& unverifiable, const oci::Descriptor& d, size_t i, const std::string& layerName,
                 const oci::LayerScan& scan);

// What the scan found: the compression read against the one `declared` by the media type
// (layer.mediatype.mismatch) and the tar entries it refused (layer.path.unsafe).
void scanFindings(report::Report& r, oci::Compression declared, const oci::LayerScan& scan,
                  const std::string& layerName);

// What applying the layer to the view refused (layer.path.unsafe) or let through with a doubt
// (layer.path.suspicious).
void viewFindings(report::Report& r, const std::vector<oci::UnsafeEntry>& refused,
                  const std::vector<oci::UnsafeEntry>& suspicious, const std::string& layerName);

}  // namespace kernodeck::audit
