// The image-spec's JSON schemas (schema/*.json in opencontainers/image-spec), checked on the
// documents as they are, before they are parsed: what the schema rejects is a finding naming
// the field ("layers[2].urls[0]"), not a failed step, so an audit still reports everything
// else. The checks are those of the schemas and of the spec's validator (an Env entry must be
// NAME=VALUE), plus what a descriptor's own fields promise: `data` is base64 of the bytes
// its digest and size name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::oci {

struct SchemaIssue {
  std::string field;  // JSON path from the document's root: "config.User", "manifests[1].platform"
  std::string message;
  // A disagreement the runtimes accept (a document whose own, usable mediaType differs from its
  // descriptor's: containerd and go-containerregistry read the document by its own type), to be
  // reported as a warning rather than an error.
  bool warning = false;
};

// image-manifest-schema.json; `declaredMediaType` is the media type of the descriptor that
// pointed here ("" when none did): it must agree with the document's own mediaType.
std::vector<SchemaIssue> checkManifestSchema(const nlohmann::json& doc, std::string_view declaredMediaType = "");
// image-index-schema.json, with the same agreement check.
std::vector<SchemaIssue> checkIndexSchema(const nlohmann::json& doc, std::string_view declaredMediaType = "");
// config-schema.json and the validator's Env rule.
std::vector<SchemaIssue> checkConfigSchema(const nlohmann::json& doc);
// content-descriptor.json for the descriptor at `path` (appended to `out`).
void checkDescriptorSchema(const nlohmann::json& d, const std::string& path, std::vector<SchemaIssue>& out);

// An absolute URI as JSON Schema's "uri" format wants it (RFC 3986: a scheme, ':', no blanks).
bool isUri(std::string_view s);
// Strict RFC 4648 base64 (standard alphabet, padded), as Go's encoding/json reads []byte.
bool isStrictBase64(std::string_view s);

}  // namespace kernodeck::oci
