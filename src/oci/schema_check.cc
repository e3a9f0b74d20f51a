// The image-spec schemas as checks on JSON values. See schema_check.h.
#include "kernodeck/oci/schema_check.h"

#include <cctype>
#include <optional>

#include "kernodeck/oci/digest.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

std::string at(const std::string& path, const std::string& field) { return path.empty() ? field : path + "." + field; }
std::string item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

const char* typeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "something else";
  }
}

// The checks of one document, collected.
class Checker {
 public:
  explicit Checker(std::vector<SchemaIssue>& out) : out_(out) {}

  void fail(const std::string& field, std::string message) { out_.push_back({field, std::move(message)}); }

  // An optional field of the given JSON type; false when absent or wrong (wrong is reported).
  bool type(const json& obj, const std::string& path, const char* field, json::value_t want, bool required = false,
            bool nullable = false) {
    if (!obj.contains(field)) {
      if (required) fail(at(path, field), "is required");
      return false;
    }
    const json& v = obj[field];
    if (nullable && v.is_null()) return false;
    bool ok = want == json::value_t::number_integer ? v.is_number_integer()
              : want == json::value_t::number_float ? v.is_number()
                                                    : v.type() == want;
    if (!ok) {
      const char* w = want == json::value_t::string           ? "a string"
                      : want == json::value_t::array          ? "an array"
                      : want == json::value_t::object         ? "an object"
                      : want == json::value_t::boolean        ? "a boolean"
                      : want == json::value_t::number_integer ? "an integer"
                                                              : "a number";
      fail(at(path, field), std::string("must be ") + w + ", not " + typeName(v));
    }
    return ok;
  }

  void stringArray(const json& obj, const std::string& path, const char* field, bool nullable = false) {
    if (!type(obj, path, field, json::value_t::array, false, nullable)) return;
    const json& a = obj[field];
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].is_string()) fail(item(at(path, field), i), std::string("must be a string, not ") + typeName(a[i]));
  }

  void stringMap(const json& obj, const std::string& path, const char* field, bool nullable = false) {
    if (!type(obj, path, field, json::value_t::object, false, nullable)) return;
    for (auto it = obj[field].begin(); it != obj[field].end(); ++it)
      if (!it.value().is_string())
        fail(at(path, field) + "[\"" + util::printable(it.key()) + "\"]",
             std::string("must be a string, not ") + typeName(it.value()));
  }

  void objectMap(const json& obj, const std::string& path, const char* field, bool nullable = false) {
    if (!type(obj, path, field, json::value_t::object, false, nullable)) return;
    for (auto it = obj[field].begin(); it != obj[field].end(); ++it)
      if (!it.value().is_object())
        fail(at(path, field) + "[\"" + util::printable(it.key()) + "\"]",
             std::string("must be an object, not ") + typeName(it.value()));
  }

  void mediaType(const json& obj, const std::string& path, const char* field, bool required) {
    if (!type(obj, path, field, json::value_t::string, required)) return;
    std::string mt = obj[field].get<std::string>();
    if (!validMediaType(mt))
      fail(at(path, field), "'" + util::printable(mt.substr(0, 100)) + "' is not a media type (type/subtype)");
  }

  void platform(const json& obj, const std::string& path) {
    if (!type(obj, path, "platform", json::value_t::object)) return;
    const json& p = obj["platform"];
    std::string pp = at(path, "platform");
    type(p, pp, "architecture", json::value_t::string, true);
    type(p, pp, "os", json::value_t::string, true);
    type(p, pp, "os.version", json::value_t::string);
    type(p, pp, "variant", json::value_t::string);
    stringArray(p, pp, "os.features");
  }

  void descriptor(const json& d, const std::string& path) {
    if (!d.is_object()) {
      fail(path, std::string("must be a descriptor object, not ") + typeName(d));
      return;
    }
    mediaType(d, path, "mediaType", true);
    mediaType(d, path, "artifactType", false);
    std::optional<Digest> digest;
    if (type(d, path, "digest", json::value_t::string, true)) {
      auto pd = parseDigest(d["digest"].get<std::string>());
      if (!pd.ok())
        fail(at(path, "digest"), pd.error().message);
      else
        digest = *pd;
    }
    bool sized = type(d, path, "size", json::value_t::number_integer, true);
    if (sized && d["size"].get<int64_t>() < 0) fail(at(path, "size"), "must not be negative");
    if (type(d, path, "urls", json::value_t::array)) {
      const json& u = d["urls"];
      for (size_t i = 0; i < u.size(); ++i) {
        if (!u[i].is_string())
          fail(item(at(path, "urls"), i), std::string("must be a string, not ") + typeName(u[i]));
        else if (!isUri(u[i].get<std::string>()))
          fail(item(at(path, "urls"), i),
               "'" + util::printable(u[i].get<std::string>().substr(0, 100)) + "' is not a URI");
      }
    }
    stringMap(d, path, "annotations");
    platform(d, path);
    if (type(d, path, "data", json::value_t::string)) {
      std::string text = d["data"].get<std::string>(), raw;
      if (!isStrictBase64(text) || !util::base64Decode(text, raw)) {
        fail(at(path, "data"), "is not base64");
      } else {
        if (sized && static_cast<int64_t>(raw.size()) != d["size"].get<int64_t>())
          fail(at(path, "data"), "holds " + std::to_string(raw.size()) + " bytes, the descriptor's size is " +
                                     std::to_string(d["size"].get<int64_t>()));
        else if (digest && digest->verifiable()) {
          util::Hasher h(digest->algorithm);
          h.update(raw);
          if (h.hex() != digest->encoded)
            fail(at(path, "data"), "does not hash to the descriptor's digest " + digest->str());
        }
      }
    }
  }

  void schemaVersion(const json& doc) {
    if (type(doc, "", "schemaVersion", json::value_t::number_integer, true) && doc["schemaVersion"].get<int64_t>() != 2)
      fail("schemaVersion", "must be 2");
  }

  // What manifests and indexes share: an object, schemaVersion 2, media types; false when
  // the document is not an object.
  bool header(const json& doc, std::string_view declared, const char* what) {
    if (!doc.is_object()) {
      fail("", std::string(what) + " must be a JSON object");
      return false;
    }
    schemaVersion(doc);
    mediaType(doc, "", "mediaType", false);
    mediaType(doc, "", "artifactType", false);
    agrees(doc, declared);
    return true;
  }

  void agrees(const json& doc, std::string_view declared) {
    if (declared.empty() || !doc.contains("mediaType") || !doc["mediaType"].is_string()) return;
    std::string own = doc["mediaType"].get<std::string>();
    if (own == declared) return;
    fail("mediaType", "the document says '" + util::printable(own.substr(0, 100)) +
                          "', the descriptor that points to it says '" +
                          util::printable(std::string(declared.substr(0, 100))) + "'");
    // A warning when the document is read by its own type, as containerd reads it: a manifest or
    // index type, unless the descriptor claims the other kind (then it is read as that, and fails).
    auto manifestType = [](std::string_view t) { return t == media::kOciManifest || t == media::kDockerManifest; };
    auto indexType = [](std::string_view t) { return t == media::kOciIndex || t == media::kDockerList; };
    out_.back().warning = (manifestType(own) && !indexType(declared)) || (indexType(own) && !manifestType(declared));
  }

 private:
  std::vector<SchemaIssue>& out_;
};

}  // namespace

bool isUri(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  for (char c : s)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' ||
        c == '^' || c == '`' || c == '{' || c == '|' || c == '}')
      return false;
  return true;
}

bool isStrictBase64(std::string_view s) {
  if (s.size() % 4 != 0) return false;
  size_t pad = 0;
  while (pad < s.size() && pad < 2 && s[s.size() - 1 - pad] == '=') ++pad;
  for (size_t i = 0; i + pad < s.size(); ++i) {
    char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') return false;
  }
  return true;
}

std::vector<SchemaIssue> checkManifestSchema(const json& doc, std::string_view declared) {
  std::vector<SchemaIssue> out;
  Checker c(out);
  if (!c.header(doc, declared, "a manifest")) return out;
  if (!doc.contains("config"))
    c.fail("config", "is required");
  else
    c.descriptor(doc["config"], "config");
  if (c.type(doc, "", "layers", json::value_t::array, true)) {
    // The OCI schema's minItems (the spec's text: "SHOULD have at least one entry", for
    // portability). An image of zero layers (FROM scratch with only metadata), OCI or Docker v2s2,
    // is valid: containerd and podman run it, and the audit reports it as image.layers.empty; an
    // artifact keeps the rule (the spec asks for the empty descriptor as its one layer).
    bool docker = doc.contains("mediaType") && doc["mediaType"] == media::kDockerManifest;
    bool image = doc.contains("config") && doc["config"].is_object() && doc["config"].contains("mediaType") &&
                 doc["config"]["mediaType"].is_string() &&
                 imageConfigType(doc["config"]["mediaType"].get<std::string>());
    if (doc["layers"].empty() && !docker && !image) c.fail("layers", "must list at least one layer");
    for (size_t i = 0; i < doc["layers"].size(); ++i) c.descriptor(doc["layers"][i], item("layers", i));
  }
  if (doc.contains("subject")) c.descriptor(doc["subject"], "subject");
  c.stringMap(doc, "", "annotations");
  return out;
}

std::vector<SchemaIssue> checkIndexSchema(const json& doc, std::string_view declared) {
  std::vector<SchemaIssue> out;
  Checker c(out);
  if (!c.header(doc, declared, "an index")) return out;
  if (c.type(doc, "", "manifests", json::value_t::array, true))
    for (size_t i = 0; i < doc["manifests"].size(); ++i) c.descriptor(doc["manifests"][i], item("manifests", i));
  if (doc.contains("subject")) c.descriptor(doc["subject"], "subject");
  c.stringMap(doc, "", "annotations");
  return out;
}

std::vector<SchemaIssue> checkConfigSchema(const json& doc) {
  std::vector<SchemaIssue> out;
  Checker c(out);
  if (!doc.is_object()) {
    c.fail("", "an image config must be a JSON object");
    return out;
  }
  for (const char* f : {"created", "author", "variant", "os.version"}) c.type(doc, "", f, json::value_t::string);
  c.type(doc, "", "architecture", json::value_t::string, true);
  c.type(doc, "", "os", json::value_t::string, true);
  c.stringArray(doc, "", "os.features");
  if (c.type(doc, "", "config", json::value_t::object, false, true)) {
    const json& cc = doc["config"];
    for (const char* f : {"User", "WorkingDir", "StopSignal"}) c.type(cc, "config", f, json::value_t::string);
    c.type(cc, "config", "ArgsEscaped", json::value_t::boolean);
    c.objectMap(cc, "config", "ExposedPorts", true);
    c.objectMap(cc, "config", "Volumes", true);
    c.stringMap(cc, "config", "Labels", true);
    c.stringArray(cc, "config", "Entrypoint", true);
    c.stringArray(cc, "config", "Cmd", true);
    c.stringArray(cc, "config", "Env", true);
    if (cc.contains("Env") && cc["Env"].is_array())
      for (size_t i = 0; i < cc["Env"].size(); ++i) {
        const json& e = cc["Env"][i];
        if (!e.is_string()) continue;
        std::string s = e.get<std::string>();
        size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0)
          c.fail(item("config.Env", i), "'" + util::printable(s.substr(0, 60)) + "' is not NAME=VALUE");
      }
  }
  if (c.type(doc, "", "rootfs", json::value_t::object, true)) {
    const json& rf = doc["rootfs"];
    if (c.type(rf, "rootfs", "type", json::value_t::string, true) && rf["type"] != "layers")
      c.fail("rootfs.type", "must be 'layers'");
    c.stringArray(rf, "rootfs", "diff_ids");
    if (!rf.contains("diff_ids")) c.fail("rootfs.diff_ids", "is required");
  }
  if (c.type(doc, "", "history", json::value_t::array))
    for (size_t i = 0; i < doc["history"].size(); ++i) {
      const json& h = doc["history"][i];
      std::string p = item("history", i);
      if (!h.is_object()) {
        c.fail(p, std::string("must be an object, not ") + typeName(h));
        continue;
      }
      for (const char* f : {"created", "author", "created_by", "comment"}) c.type(h, p, f, json::value_t::string);
      c.type(h, p, "empty_layer", json::value_t::boolean);
    }
  return out;
}

void checkDescriptorSchema(const json& d, const std::string& path, std::vector<SchemaIssue>& out) {
  Checker(out).descriptor(d, path);
}

}  // namespace kernodeck::oci
