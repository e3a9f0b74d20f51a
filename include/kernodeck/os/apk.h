// OS packages from Alpine's apk database (lib/apk/db/installed): the packages, the files each
// owns (F: directory, R: file, a: its mode) and their checksums (Z: "Q1" and the base64 SHA-1 of
// the content, or of the target text for a symlink), verified against the image.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/os/package_db.h"

namespace kernodeck::os {

// Size limits for the apk database files the layer walk should keep (0: none).
uint64_t apkCaptureLimit(const std::string& path);

// Parses an `installed` file: packages, owned directories and files with their checksums.
// Pure; unknown fields are ignored, as apk itself does.
PackageDatabase parseApkInstalled(std::string_view text);

// Decodes an apk checksum ("Q1<base64 sha1>", "Q2<base64 sha256>", or plain hex md5/sha1)
// into (OpenSSL algorithm name, lower-case hex); empty when it is none of these.
std::pair<std::string, std::string> decodeApkChecksum(std::string_view z);

// Finds and reads the database; with `verify`, checks every owned file.
PackageDatabase readApk(const oci::FsView& view, bool verify = true);

}  // namespace kernodeck::os
