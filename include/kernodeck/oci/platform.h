// Platform names and choosing a manifest for a platform out of an index.
#pragma once

#include <optional>
#include <string_view>

#include "kernodeck/oci/manifest.h"

namespace kernodeck::oci {

// The machine this runs on, in OCI terms (linux/amd64, linux/arm64/v8, ...).
Platform hostPlatform();
// Parses "os/arch[/variant]"; normalises aliases (x86_64, aarch64, armhf...).
Result<Platform> parsePlatform(std::string_view s);
// Canonical architecture and variant (aarch64 -> arm64, arm64 variant v8 -> "", amd64 variant v1
// -> "", arm default v7), as containerd's platforms.Normalize writes them.
Platform normalize(Platform p);
// How well an index entry's platform `have` serves `want`, as containerd's platforms.Only orders
// them: nullopt when it cannot, else a rank, lower preferred: the same os/arch/variant after
// normalisation 0; a lower variant of the same architecture (amd64 v3 runs v2 and v1, arm v7 runs
// v6 and v5) 10 + the distance; another architecture the machine runs (386 on amd64, arm v8 to v5
// on arm64) 100 and more. An amd64 wanted without variant is v1: an amd64/v2 entry does not serve it.
std::optional<int> platformRank(const Platform& have, const Platform& want);
// The entry of one index containerd's images.Manifest follows for `want`: the best ranked
// (platformRank) entry naming a platform, the first in index order among equals; with none, the
// first entry that names no platform (its config or nested index decides: index_walk.h).
// NotFound lists the platforms there are.
Result<size_t> selectPlatform(const Index& index, const Platform& want);

}  // namespace kernodeck::oci
