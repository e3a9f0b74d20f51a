// OS packages from an rpm database (RHEL, UBI, Rocky, Fedora, SUSE), read with Debian's librpm
// rather than a hand-written header parser, inside the rpm plugin libkernodeck_rpm.so (rpm_abi.h)
// opened on first use: rpmdb.sqlite (RHEL 9, Fedora) and the Berkeley DB
// `Packages` of RHEL 8 through librpm's read-only bdb_ro backend. The image is never run: the
// database files alone are copied from the view into a private temporary directory, which
// librpm opens read-only and which is removed afterwards.
#pragma once

#include <cstdint>
#include <string>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/os/package_db.h"
#include "kernodeck/os/rpm_abi.h"
#include "kernodeck/util/result.h"

namespace kernodeck::os {

// Opens the rpm plugin at `path` and checks its interface (entry symbol, ABI version and size);
// each failure is an Error naming the file. A plugin that passes stays loaded.
Result<const rpmplugin::RpmPluginAbi*> loadRpmPlugin(const std::string& path);

// Whether the process's rpm plugin loads (searched once, on first use: beside the executable,
// then ../lib/kernodeck/ beside it); false in a build without librpm, or when the file is
// missing or refused, and rpmPluginError() says why. An image with an rpm database is then
// reported with os.package.reader-missing (an error), never as clean.
bool rpmSupported();
const std::string& rpmPluginError();

// librpm's version, loading the plugin; empty when it cannot be loaded.
std::string librpmVersion();

// The plugin file that would be loaded, with its size and modification time ("none" without
// one), without loading it: part of the result cache's key, as the executable's own are.
std::string rpmPluginIdentity();

// Size limits for the rpm database files the layer walk should keep (0: none).
uint64_t rpmCaptureLimit(const std::string& path);

// Reads the rpm database in a host directory (the files rpmdb.sqlite or Packages): packages and
// the files each owns, with rpm's verify flags applied (files not installed, e.g. documentation
// under tsflags=nodocs, and %ghost files are left out; %config files are marked).
Result<PackageDatabase> readRpmDatabaseDir(const std::string& dir);

// Finds the database in the image (var/lib/rpm, usr/lib/sysimage/rpm), reads it and, with
// `verify`, checks every owned file like `rpm -V`. `present` is false when there is none;
// `error` says why one that is there could not be read.
PackageDatabase readRpm(const oci::FsView& view, bool verify = true);

}  // namespace kernodeck::os
