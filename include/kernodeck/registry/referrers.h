// OCI artifacts and the referrers of a manifest (distribution spec 1.1): an artifact is an
// image manifest with an `artifactType`, the empty config and its blobs as layers, and a
// `subject` naming the manifest it is about. A registry with the referrers API indexes the
// subject itself (it answers the push with an OCI-Subject header); for one without it (Debian's
// docker-registry 2.8) the client keeps the referrers in an image index under the fallback tag
// `sha256-<hex of the subject>`, as the spec's referrers tag schema says.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/registry/client.h"

namespace kernodeck::registry {

inline constexpr const char* kEmptyConfigType = "application/vnd.oci.empty.v1+json";

struct ArtifactBlob {
  std::string mediaType;
  std::string bytes;
};

struct Artifact {
  std::string artifactType;
  std::vector<ArtifactBlob> blobs;  // the manifest's layers
  std::map<std::string, std::string> annotations;
  std::optional<oci::Descriptor> subject;
  // Also written as the config descriptor's artifactType when set (cosign 3's referrers do so).
  std::string configArtifactType;
};

// The artifact's image manifest, as pushed (deterministic for the same artifact).
std::string artifactManifest(const Artifact& a);

// "sha256-<hex>": the fallback tag of the referrers of `subject`.
std::string fallbackTag(const oci::Digest& subject);

// Pushes the blobs and the manifest (by `tag` when given, else by digest). With a subject, and
// no OCI-Subject in the registry's answer, adds the manifest to the fallback index (read,
// add unless present, write, read back: retried when a concurrent writer dropped it).
Result<oci::Descriptor> pushArtifact(Client& c, const Artifact& a, const std::string& tag = "");

// A referrer as listed in the referrers index. Anyone who can push writes that index: an entry
// that is not a valid descriptor keeps its position and what could be read of it, with
// `problem` saying what is wrong, so the caller can name it and go on with the others.
struct Referrer {
  oci::Descriptor desc;
  std::string artifactType;
  size_t position = 0;  // in the index's manifests
  std::string digest;   // as the entry spells it (valid or not), for messages
  std::string problem;  // empty when the entry is a valid descriptor
};

// The entries of a referrers index (the API's answer or the fallback tag's bytes), only those of
// `artifactType` when given (an entry whose artifactType is not that string is not listed);
// `what` names the index in messages. Corrupt only when the document is not an image index.
Result<std::vector<Referrer>> parseReferrers(std::string_view index, const std::string& artifactType,
                                             const std::string& what);

// The referrers of `subject`, only those of `artifactType` when given (filtered here, whether or
// not the registry says OCI-Filters-Applied): from the referrers API where the registry has it
// (every page, up to Client::referrers' bounds; `*truncated` says when more was listed than
// read), else from the fallback tag; none is an empty list.
Result<std::vector<Referrer>> listReferrers(Client& c, const oci::Digest& subject, const std::string& artifactType = "",
                                            bool* truncated = nullptr);

// An artifact manifest read back (its blobs are not fetched).
struct FetchedArtifact {
  oci::Descriptor desc;
  std::string artifactType;
  std::optional<oci::Descriptor> subject;
  std::vector<oci::Descriptor> blobs;
  std::map<std::string, std::string> annotations;
};

// Parses an artifact manifest's bytes (`what` names it in messages); Corrupt when it is not an
// OCI image manifest or a descriptor in it is invalid.
Result<FetchedArtifact> parseArtifact(std::string_view bytes, const std::string& what);

// Fetches (at most `maxBytes`) and parses the artifact manifest `ref` (a tag or digest); NotFound
// when absent, Corrupt when it is not an OCI image manifest.
Result<FetchedArtifact> fetchArtifact(Client& c, const std::string& ref, uint64_t maxBytes = oci::kMaxManifestBytes);

// The image manifest a tag or digest names in the client's repository; for an index, the
// manifest for `platform`, nested indexes and platform-less entries followed as containerd follows
// them (oci/index_walk.h). What audits read and what reports are attached to.
Result<oci::Descriptor> resolveImageManifest(Client& c, const std::string& tagOrDigest, const oci::Platform& platform);

}  // namespace kernodeck::registry
