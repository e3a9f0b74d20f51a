// conda environments: the packages conda-meta/*.json records (name, version, build, channel)
// and the files each installed, verified against the SHA-256 and size conda recorded
// (paths_data; sha256_in_prefix where conda rewrote a prefix placeholder at install, and no
// digest where it rewrote one without recording the result).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/os/package_db.h"
#include "kernodeck/util/result.h"

namespace kernodeck::os {

// Size limits for the conda-meta files the layer walk should keep (0: none).
uint64_t condaCaptureLimit(const std::string& path);

// Adds the package one conda-meta JSON document describes to `db`; paths are joined to
// `prefix` (the environment's directory in the image, no leading '/'). Pure.
Status parseCondaMeta(std::string_view json, const std::string& prefix, PackageDatabase& db);

// Environment directories that hold a conda-meta directory: the usual install roots
// (opt/conda, opt/miniconda3, opt/miniforge3, root/miniconda3, ...) and their envs/*.
std::vector<std::string> findCondaPrefixes(const oci::FsView& view);

// Reads every conda-meta/*.json of `prefix`; `errors` gets one line per unreadable document.
// With `verify`, checks every recorded file.
PackageDatabase readConda(const oci::FsView& view, const std::string& prefix, std::vector<std::string>& errors,
                          bool verify = true);

}  // namespace kernodeck::os
