// Platform names and choosing a manifest for a platform out of an index.
#pragma once

#include <string_view>

#include "kernodeck/oci/manifest.h"

namespace kernodeck::oci {

// The machine this runs on, in OCI terms (linux/amd64, linux/arm64/v8, ...).
Platform hostPlatform();
// Parses "os/arch[/variant]"; normalises aliases (x86_64, aarch64, armhf...).
Result<Platform> parsePlatform(std::string_view s);
// Canonical architecture and variant (aarch64 -> arm64, arm64 variant v8 -> "", arm default v7).
Platform normalize(Platform p);
// Picks the manifest for `want`: exact os/arch/variant first; an arm variant
// falls back to the highest lower one (v7 runs v6 and v5); with no match, the only entry
// that names no platform, if there is one. Error lists what is there.
Result<size_t> selectPlatform(const Index& index, const Platform& want);

}  // namespace kernodeck::oci
