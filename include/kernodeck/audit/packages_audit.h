// The package part of an audit, shared by images and root filesystems: OS
// packages (dpkg, verified like debsums), Python environments (inventory, the
// pip-check contract, wheel tags, RECORD integrity with dpkg ownership), pins
// from requirement files, the torch/CUDA build (the image's expectation) and
// leaked credentials or build paths.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernodeck/audit/lock_audit.h"
#include "kernodeck/audit/gpu_code_audit.h"
#include "kernodeck/gpu/expectation.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

struct PackagesContext {
  std::string architecture = "amd64";      // OCI architecture of the image
  std::map<std::string, std::string> env;  // the image config's environment
  std::map<std::string, std::string> labels;
  std::string imageDigest;
  std::vector<std::string> requirementsFiles;  // host paths given with --requirements
  // --python: interpreters or environment roots in the audited tree; when given, exactly these
  // environments are audited (no search).
  std::vector<std::string> pythonTargets;
  LockOptions lock;  // --lock, --lock-group, --wheels
  // The files the layer walk kept GPU code of, and the layers' digests (torchLocation is found here).
  GpuCodeContext gpuCode;
};

// Paths the layer walk must keep for this analysis (size limit, 0: none).
uint64_t packagesCaptureLimit(const std::string& path);
// Which hashes the layer walk computes for a file (oci::kHash* bits), guessed from where it is
// before any package database is read: MD5 where dpkg may own it, SHA-256 where a RECORD may
// list it. A wrong guess costs one more read of that layer (FsView::prepareHashes), never a result.
unsigned packagesHashPolicy(const std::string& path);

// Runs the "os-packages" and "python" steps on `r` (both declared by the caller).
// Returns the image's expectation.
gpu::Expectation auditPackages(const oci::FsView& view, const PackagesContext& ctx, report::Report& r);

}  // namespace kernodeck::audit
