// OCI and Docker v2 schema 2 manifests, image indexes / manifest lists and
// image configs: parsing and validation against the image spec.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/digest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::oci {

namespace media {
inline constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kOciConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr const char* kDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr const char* kDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
inline constexpr const char* kDockerLayerTar = "application/vnd.docker.image.rootfs.diff.tar";
inline constexpr const char* kOciEmpty = "application/vnd.oci.empty.v1+json";
}  // namespace media

// Largest manifest, index or config accepted (the distribution spec's 4 MiB).
inline constexpr uint64_t kMaxManifestBytes = 4u << 20;

enum class Compression { None, Gzip, Zstd, Unknown };

// Compression of a layer media type; Unknown for types that are not layers.
Compression layerCompression(std::string_view mediaType);
// An ocicrypt layer ("...+encrypted"): its bytes are not a tar until decrypted.
bool encryptedLayer(std::string_view mediaType);
// A config media type that makes a manifest an image (OCI or Docker image config); any other
// (the empty descriptor, an artifact's own type) makes it an artifact.
bool imageConfigType(std::string_view mediaType);
const char* toString(Compression c);
// RFC 6838 shape required of every descriptor mediaType.
bool validMediaType(std::string_view mt);

struct Platform {
  std::string os;
  std::string architecture;
  std::string variant;
  std::string osVersion;
  std::string str() const;  // "linux/arm64/v8"
};

struct Descriptor {
  std::string mediaType;
  Digest digest;
  int64_t size = 0;
  std::optional<Platform> platform;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> urls;
};

struct Manifest {
  std::string mediaType;     // as declared, or inferred
  std::string artifactType;  // as declared; empty for images
  Descriptor config;
  std::vector<Descriptor> layers;
  std::map<std::string, std::string> annotations;
};

struct Index {
  std::string mediaType;
  std::vector<Descriptor> manifests;
  std::map<std::string, std::string> annotations;
};

struct ImageConfig {
  Platform platform;
  std::vector<std::string> env, entrypoint, cmd;
  std::string user, workingDir, created;
  std::map<std::string, std::string> labels;
  std::vector<Digest> diffIds;
  nlohmann::json history = nlohmann::json::array();
};

enum class DocKind { Manifest, Index };

Result<Descriptor> parseDescriptor(const nlohmann::json& j);
// Tells a manifest from an index by mediaType (given, or in the document) and shape.
Result<DocKind> detectKind(std::string_view bytes, std::string_view mediaTypeHint = "");
Result<Manifest> parseManifest(std::string_view bytes);
Result<Index> parseIndex(std::string_view bytes);
Result<ImageConfig> parseConfig(std::string_view bytes);

}  // namespace kernodeck::oci
