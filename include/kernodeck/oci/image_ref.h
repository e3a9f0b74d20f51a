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
  // For a registry reference, what registry::parseReference reads: the reference as written,
  // without a docker:// prefix.
  std::string registryName() const { return raw.starts_with("docker://") ? raw.substr(9) : raw; }
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

// Which references a command takes: any image (the audit), or only a registry's (the probe's
// --image, which names the running image's manifest in a registry: never a local path).
enum class RefUse { AnyImage, RegistryOnly };

// What an image reference means, decided here for every command that takes one.
struct ResolvedRef {
  ImageRef ref;
  // How the transport was chosen when it is not the one written (a reference without one read
  // as the local path it names, a dir: without manifest.json read as a root filesystem), for
  // the report's reference.transport finding; empty otherwise.
  std::string note;
};

// AnyImage: the transport written (parseImageRef); a reference without one that reads as a local
// path (looksLikeLocalPath) is what is there (detectLocalRef); a dir: directory without
// manifest.json is a root filesystem. RegistryOnly: a registry reference as written (its
// grammar is registry::parseReference's, applied to ref.registryName()); no path is looked at.
// Fails as parseImageRef and detectLocalRef do.
Result<ResolvedRef> resolveImageRef(std::string_view reference, RefUse use = RefUse::AnyImage);

}  // namespace kernodeck::oci
