// `kernodeck audit`: reads an image (or an unpacked root filesystem) without
// running it, verifies every digest, walks the layers into a filesystem view,
// and collects findings into a kernodeck.report/v1 report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/audit/lock_audit.h"
#include "kernodeck/gpu/expectation.h"
#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/report/exceptions.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

struct AuditOptions {
  std::optional<oci::Platform> platform;  // default: the host's
  // Extra paths whose content the layer walk should keep (analysers add theirs):
  // returns the largest size to keep, 0 for none.
  std::function<uint64_t(const std::string&)> capture;
  // Requirement files on this machine to check the image's packages against.
  std::vector<std::string> requirementsFiles;
  // Python environments to audit instead of searching (--python; see PackagesContext).
  std::vector<std::string> pythonTargets;
  // How to reach registries (auth, TLS, retries, cache).
  registry::ClientOptions registry;
  // Layers read at once (0: one per core, at most 4).
  unsigned parallelLayers = 0;
  // Replay the stored outcome of the same analysis of the same image (registry cache only).
  bool reuseResults = true;
  // Layer walk results shared with other machines (--cache-repo): read before a layer is
  // walked, given what was walked. Registry images only, like the local layer cache.
  std::shared_ptr<oci::SharedScanStore> sharedScans;
  // --exceptions: applied to the report when the audit ends (report/exceptions.h).
  std::vector<report::ExceptionsFile> exceptions;
  // --lock, --lock-group, --wheels (lock_audit.h).
  LockOptions lock;
  // --gpu: the GPUs the image's GPU code is judged against (audit/gpu_support.h).
  std::vector<gpu::GpuTarget> gpus;
  // Read the NVIDIA GPU code (fatbins) of the image's ELF files as the layers stream by
  // (gpu/gpu_code_scan.h); off only to measure what it costs (bench/run).
  bool gpuCode = true;
};

struct AuditResult {
  report::Report report{"audit"};
  // The final filesystem, when the walk got that far; for analysers that follow.
  std::unique_ptr<oci::FsView> view;
  // What the image needs from a GPU node (kernodeck.expect/v1).
  gpu::Expectation expectation;
};

AuditResult auditImage(const std::string& reference, const AuditOptions& opts);

// What the layer walk of an audit keeps of each layer (captured files, hashes) under `opts`.
oci::ScanOptions layerScanOptions(const AuditOptions& opts);

// Walks one layer blob of a registry repository as an audit would and keeps the result in the
// local and shared caches (`fleet run`, for the layers a worker owns). True when a result was
// already there (nothing fetched); an error when the blob cannot be read or does not match.
Result<bool> prepareLayer(const registry::Reference& repo, const oci::Descriptor& layer, const AuditOptions& opts);

}  // namespace kernodeck::audit
