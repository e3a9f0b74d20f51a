// Image references in skopeo's transport syntax:
//   oci:DIR[:TAG|@DIGEST]   oci-archive:FILE[:TAG]   docker-archive:FILE[:REPO:TAG]
//   dir:PATH (an unpacked root filesystem)   anything else: a registry reference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernodeck/oci/digest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::oci {

enum class Transport { OciLayout, OciArchive, DockerArchive, Dir, Registry };

const char* toString(Transport t);

struct ImageRef {
  Transport transport = Transport::Registry;
  std::string path;               // layout dir, archive file, rootfs dir; registry: the name
  std::string tag;                // oci/oci-archive tag, docker-archive "repo:tag", registry tag
  std::optional<Digest> digest;   // oci:DIR@DIGEST, registry @digest
  std::string raw;                // as the user wrote it

  // A mutable reference: a tag (or nothing) rather than a digest.
  bool mutableTag() const { return !digest.has_value(); }
};

Result<ImageRef> parseImageRef(std::string_view s);

}  // namespace kernodeck::oci
