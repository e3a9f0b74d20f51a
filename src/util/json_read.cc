#include "kernodeck/util/json_read.h"

#include <limits>

namespace kernodeck::util {

using nlohmann::json;

namespace {

// How a value reads in a message: "null", "a number", "an array"...
std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "not a JSON value";
  }
}

}  // namespace

Status checkJsonNesting(std::string_view text, std::string_view what, int maxDepth) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return Error::Invalid(std::string(what) + " nests arrays and objects more than " + std::to_string(maxDepth) +
                              " deep (at byte " + std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

Result<json> parseJsonText(std::string_view text, const std::string& what) {
  KDK_TRY_STATUS(checkJsonNesting(text, what));
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    if (e.byte >= text.size()) return Error::Invalid(what + " is not valid JSON: it ends early (truncated?)");
    return Error::Invalid(what + " is not valid JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const std::exception&) {
    return Error::Invalid(what + " is not valid JSON");
  }
}

json parseUntrustedJson(std::string_view text) {
  if (!checkJsonNesting(text, "").ok()) return json(json::value_t::discarded);
  return json::parse(text.begin(), text.end(), nullptr, false);
}

std::string JsonReader::fieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Error JsonReader::wrong(std::string_view expected) const {
  return Error::Invalid((path_.empty() ? std::string("the document") : path_) + " is " + describe(*j_) + ", expected " +
                        std::string(expected));
}

Error JsonReader::missing(std::string_view key, std::string_view expected) const {
  return Error::Invalid(fieldPath(key) + " is missing (expected " + std::string(expected) + ")");
}

bool JsonReader::has(std::string_view key) const { return j_->is_object() && j_->contains(key); }

JsonReader JsonReader::at(std::string_view key) const { return JsonReader(j_->find(key).value(), fieldPath(key)); }

Status JsonReader::expectObject() const {
  if (!j_->is_object()) return wrong("an object");
  return {};
}

Result<std::vector<JsonReader>> JsonReader::items() const {
  if (!j_->is_array()) return wrong("an array");
  std::vector<JsonReader> out;
  out.reserve(j_->size());
  for (size_t i = 0; i < j_->size(); ++i) out.emplace_back((*j_)[i], path_ + "[" + std::to_string(i) + "]");
  return out;
}

Status JsonReader::as(std::string& out) const {
  if (!j_->is_string()) return wrong("a string");
  out = j_->get_ref<const std::string&>();
  return {};
}

Status JsonReader::as(int64_t& out) const {
  if (j_->is_number_integer() && !j_->is_number_unsigned()) {
    out = j_->get<int64_t>();
    return {};
  }
  if (j_->is_number_unsigned() && j_->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    out = static_cast<int64_t>(j_->get<uint64_t>());
    return {};
  }
  return wrong("an integer");
}

Status JsonReader::as(double& out) const {
  if (!j_->is_number()) return wrong("a number");
  out = j_->get<double>();
  return {};
}

Status JsonReader::as(bool& out) const {
  if (!j_->is_boolean()) return wrong("true or false");
  out = j_->get<bool>();
  return {};
}

Status JsonReader::as(std::vector<std::string>& out) const {
  KDK_TRY_ASSIGN(auto list, items());
  std::vector<std::string> v(list.size());
  for (size_t i = 0; i < list.size(); ++i) KDK_TRY_STATUS(list[i].as(v[i]));
  out = std::move(v);
  return {};
}

Status JsonReader::as(std::vector<double>& out) const {
  KDK_TRY_ASSIGN(auto list, items());
  std::vector<double> v(list.size());
  for (size_t i = 0; i < list.size(); ++i) KDK_TRY_STATUS(list[i].as(v[i]));
  out = std::move(v);
  return {};
}

Status JsonReader::as(std::map<std::string, std::string>& out) const {
  if (!j_->is_object()) return wrong("an object of strings");
  std::map<std::string, std::string> m;
  for (auto it = j_->begin(); it != j_->end(); ++it)
    KDK_TRY_STATUS(JsonReader(it.value(), fieldPath(it.key())).as(m[it.key()]));
  out = std::move(m);
  return {};
}

Result<JsonReader> JsonReader::member(std::string_view key, std::string_view expected) const {
  KDK_TRY_STATUS(expectObject());
  if (!has(key)) return missing(key, expected);
  return at(key);
}

Result<JsonReader> JsonReader::object(std::string_view key) const {
  KDK_TRY_ASSIGN(JsonReader m, member(key, "an object"));
  KDK_TRY_STATUS(m.expectObject());
  return m;
}

Result<std::optional<JsonReader>> JsonReader::optObject(std::string_view key) const {
  KDK_TRY_STATUS(expectObject());
  if (!has(key)) return std::optional<JsonReader>();
  JsonReader m = at(key);
  KDK_TRY_STATUS(m.expectObject());
  return std::optional<JsonReader>(m);
}

Result<std::vector<JsonReader>> JsonReader::array(std::string_view key) const {
  KDK_TRY_ASSIGN(JsonReader m, member(key, "an array"));
  return m.items();
}

Result<std::vector<JsonReader>> JsonReader::optArray(std::string_view key) const {
  KDK_TRY_STATUS(expectObject());
  if (!has(key)) return std::vector<JsonReader>();
  return at(key).items();
}

}  // namespace kernodeck::util
