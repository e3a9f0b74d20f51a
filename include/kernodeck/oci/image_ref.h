// Image references in skopeo's transport syntax:
//   oci:DIR[:TAG|@DIGEST]   oci-archive:FILE[:TAG]   docker-archive:FILE[:REPO:TAG|:@N]
//   dir:PATH (skopeo's directory: manifest.json and blobs named by digest)
//   rootfs:PATH (an unpacked root filesystem; Kernodeck's own)   anything else: a registry reference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernodeck/oci/digest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::oci {

enum class Transport { OciLayout, OciArchive, DockerArchive, Dir, RootFs, Registry };

const char* toString(Transport t);

struct ImageRef {
  Transport transport = Transport::Registry;
  std::string path;                   // layout dir, archive file, rootfs dir; registry: the name
  std::string tag;                    // oci/oci-archive tag, docker-archive "repo:tag", registry tag
  std::optional<Digest> digest;       // oci:DIR@DIGEST, registry @digest
  std::optional<size_t> sourceIndex;  // docker-archive:FILE:@N, the Nth image of manifest.json
  std::string raw;                    // as the user wrote it

  // A mutable reference: a tag (or nothing) rather than a digest.
  bool mutableTag() const { return !digest.has_value(); }
};

Result<ImageRef> parseImageRef(std::string_view s);

// True when a reference without a transport prefix reads as a local path rather than a
// registry name: it starts with '/', './', '../' or '~', or names something on disk.
bool looksLikeLocalPath(std::string_view s);

// What a local path holds, for a reference written without a transport: an OCI layout
// directory (oci:), skopeo's directory (dir:), a root filesystem (rootfs:), a docker or
// OCI archive (docker-archive:, oci-archive:). Fails with a message naming the transports
// when it is none of these.
Result<ImageRef> detectLocalRef(const std::string& path);

}  // namespace kernodeck::oci
