// Typed reads from a JSON document someone else wrote.
//
// A document read back from disk (a reference, a report, a dossier's procedure) is untrusted:
// any field can be null, a number, an array or missing. JsonReader checks the type of every
// value it hands out and fails with an error that names the field's path and what was
// expected ("code.configs[1].sha256 is null, expected a string"), so a parser built on it
// never reaches nlohmann's type exceptions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::util {

// How deep a document's arrays and objects may nest. nlohmann's parser and destructor do not
// recurse, but copying, comparing and dumping a value recurse once per level: 100000 brackets
// (200 KB) overflow the stack. No document Kernodeck reads nests past a few dozen.
inline constexpr int kMaxJsonDepth = 256;

// Fails, naming `what`, when `text` nests arrays and objects deeper than maxDepth; a scan of the
// bytes (strings skipped) before any parser builds a tree. Every parser of a JSON document
// someone else wrote calls it, or parseJsonText, which does.
Status checkJsonNesting(std::string_view text, std::string_view what, int maxDepth = kMaxJsonDepth);

// Parses `text` as JSON without exceptions escaping; the error names `what` and the byte
// where the text stops being JSON (a truncated file says so). Nesting is bounded as above.
Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& what);

// For code that treats any malformed input alike: `text` parsed, or a discarded value
// (is_discarded()) when it is not JSON or nests deeper than kMaxJsonDepth. The bounded
// replacement of `json::parse(text, nullptr, false)` for documents someone else wrote.
nlohmann::json parseUntrustedJson(std::string_view text);

// A value inside a document and the path that led to it. Holds a pointer into the document,
// which must outlive the reader.
class JsonReader {
 public:
  explicit JsonReader(const nlohmann::json& j, std::string path = "") : j_(&j), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *j_; }
  // "" for the root, else "code.configs[2].sha256".
  const std::string& path() const { return path_; }
  std::string fieldPath(std::string_view key) const;
  // The error for this value: "<path> is <actual type>, expected <expected>".
  Error wrong(std::string_view expected) const;
  Error missing(std::string_view key, std::string_view expected) const;

  bool isNull() const { return j_->is_null(); }
  // Present, null included.
  bool has(std::string_view key) const;

  // This value must be an object / an array (of anything; items() gives each element a path).
  Status expectObject() const;
  Result<std::vector<JsonReader>> items() const;

  // Reads this value as one of the types below (the same checks as get()).
  Status as(std::string& out) const;
  Status as(int64_t& out) const;
  Status as(double& out) const;
  Status as(bool& out) const;
  Status as(std::vector<std::string>& out) const;
  Status as(std::vector<double>& out) const;
  Status as(std::map<std::string, std::string>& out) const;  // an object of strings

  // Required member: missing or of another type is an error.
  template <class T>
  Status get(std::string_view key, T& out) const {
    KDK_TRY_ASSIGN(JsonReader m, member(key, expectedName(out)));
    return m.as(out);
  }
  // Optional member: absent leaves `out` untouched; present, it must have the type (null too
  // is an error unless `nullable`, in which case null also leaves `out` untouched).
  template <class T>
  Status getOpt(std::string_view key, T& out, bool nullable = false) const {
    KDK_TRY_STATUS(expectObject());
    if (!has(key)) return {};
    JsonReader m = at(key);
    if (nullable && m.isNull()) return {};
    return m.as(out);
  }

  // Required member object / array; optional ones give nullopt when absent.
  Result<JsonReader> object(std::string_view key) const;
  Result<std::optional<JsonReader>> optObject(std::string_view key) const;
  Result<std::vector<JsonReader>> array(std::string_view key) const;
  Result<std::vector<JsonReader>> optArray(std::string_view key) const;  // absent: empty

 private:
  Result<JsonReader> member(std::string_view key, std::string_view expected) const;
  JsonReader at(std::string_view key) const;
  static const char* expectedName(const std::string&) { return "a string"; }
  static const char* expectedName(const int64_t&) { return "an integer"; }
  static const char* expectedName(const double&) { return "a number"; }
  static const char* expectedName(const bool&) { return "true or false"; }
  static const char* expectedName(const std::vector<std::string>&) { return "an array of strings"; }
  static const char* expectedName(const std::vector<double>&) { return "an array of numbers"; }
  static const char* expectedName(const std::map<std::string, std::string>&) { return "an object of strings"; }

  const nlohmann::json* j_;
  std::string path_;
};

}  // namespace kernodeck::util
