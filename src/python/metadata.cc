#include "kernodeck/python/metadata.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <nlohmann/json.hpp>

#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

CoreMetadata parseCoreMetadata(std::string_view text) {
  CoreMetadata m;
  std::string key, value;
  auto flush = [&] {
    if (key.empty()) return;
    std::string k = util::toLower(key);
    std::string v(util::trim(value));
    if (k == "name")
      m.name = v;
    else if (k == "version")
      m.version = v;
    else if (k == "requires-python")
      m.requiresPython = v;
    else if (k == "summary")
      m.summary = v;
    else if (k == "requires-dist")
      m.requiresDist.push_back(v);
    else if (k == "provides-extra")
      m.providesExtra.push_back(v);
    key.clear();
    value.clear();
  };
  for (const auto& rawLine : util::split(text, '\n')) {
    std::string line = rawLine;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // end of headers
    if (line[0] == ' ' || line[0] == '\t') {
      value += "\n" + line;
      continue;
    }
    flush();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    key = line.substr(0, colon);
    value = line.substr(colon + 1);
  }
  flush();
  return m;
}

std::vector<std::string> parseRequiresTxt(std::string_view text) {
  std::vector<std::string> out;
  std::string extra, marker;
  for (const auto& raw : util::split(text, '\n')) {
    std::string line(util::trim(raw));
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      std::string sec = line.substr(1, line.size() - 2);
      size_t colon = sec.find(':');
      extra = std::string(util::trim(std::string_view(sec).substr(0, colon)));
      marker = colon == std::string::npos ? "" : std::string(util::trim(std::string_view(sec).substr(colon + 1)));
      continue;
    }
    std::string m;
    if (!extra.empty() && !marker.empty())
      m = "(" + marker + ") and extra == \"" + extra + "\"";
    else if (!extra.empty())
      m = "extra == \"" + extra + "\"";
    else if (!marker.empty())
      m = marker;
    out.push_back(m.empty() ? line : line + "; " + m);
  }
  return out;
}

namespace {

// The fields of a line holding a double quote, unescaped into `own`: a quote opens a quoted part
// only at the start of a field (nothing kept of it yet), and "" inside one is a quote. The first
// three fields' [begin, end) offsets in `own` go to `at` (later ones are dropped once counted);
// returns the number of fields.
size_t quotedFields(std::string_view line, std::string& own, std::array<std::pair<size_t, size_t>, 3>& at) {
  size_t n = 0, start = own.size();
  bool quoted = false;
  auto endField = [&] {
    if (n < at.size())
      at[n] = {start, own.size()};
    else
      own.resize(start);
    ++n;
    start = own.size();
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        own.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        own.push_back(c);
      }
    } else if (c == '"' && own.size() == start) {
      quoted = true;
    } else if (c == ',') {
      endField();
    } else {
      own.push_back(c);
    }
  }
  endField();
  return n;
}

}  // namespace

bool RecordReader::next(RecordRowView& row) {
  std::string_view line;
  while (!done_ && line.empty()) {  // RECORD: one row per file
    size_t nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_.remove_prefix(nl == std::string_view::npos ? rest_.size() : nl + 1);
    done_ = nl == std::string_view::npos;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (util::trim(line).empty()) line = {};
  }
  if (line.empty()) return false;
  row = {};
  own_.clear();
  std::array<std::string_view, 3> f;
  size_t fields = 0;
  if (line.find('"') == std::string_view::npos) {  // no quoting (nearly every row): fields as they are
    for (size_t start = 0;; ++fields) {
      size_t comma = line.find(',', start);
      if (fields < f.size()) f[fields] = line.substr(start, comma - start);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    ++fields;
  } else {
    own_.reserve(2 * line.size());  // the fields and a lowercased algorithm: no reallocation under the views
    std::array<std::pair<size_t, size_t>, 3> at{};
    fields = quotedFields(line, own_, at);
    for (size_t i = 0; i < std::min(fields, f.size()); ++i)
      f[i] = std::string_view(own_).substr(at[i].first, at[i].second - at[i].first);
    row.unescaped = true;
  }
  row.path = f[0];
  if (fields > 1 && !f[1].empty()) {
    size_t eq = f[1].find('=');
    if (eq == std::string_view::npos || eq == 0) {
      row.malformed = true;
    } else {
      std::string_view algorithm = f[1].substr(0, eq);
      auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
      if (std::any_of(algorithm.begin(), algorithm.end(), [&](char c) { return lower(c) != c; })) {
        size_t from = own_.size();
        for (char c : algorithm) own_.push_back(lower(c));
        algorithm = std::string_view(own_).substr(from);
        row.unescaped = true;
      }
      row.algorithm = algorithm;
      row.digest = f[1].substr(eq + 1);
      if (!row.digest.empty() && row.digest.back() == '=') row.malformed = true;  // padded: tolerated, reported
    }
  }
  if (fields > 2) row.size = f[2];
  if (fields > 3) row.malformed = true;
  return true;
}

std::vector<RecordRow> parseRecord(std::string_view text) {
  std::vector<RecordRow> rows;
  RecordReader reader(text);
  for (RecordRowView r; reader.next(r);)
    rows.push_back(
        {std::string(r.path), std::string(r.algorithm), std::string(r.digest), std::string(r.size), r.malformed});
  return rows;
}

WheelInfo parseWheel(std::string_view text) {
  WheelInfo w;
  for (const auto& raw : util::split(text, '\n')) {
    size_t colon = raw.find(':');
    if (colon == std::string::npos) continue;
    std::string k = util::toLower(util::trim(std::string_view(raw).substr(0, colon)));
    std::string v(util::trim(std::string_view(raw).substr(colon + 1)));
    if (k == "wheel-version")
      w.wheelVersion = v;
    else if (k == "generator")
      w.generator = v;
    else if (k == "root-is-purelib")
      w.rootIsPurelib = util::toLower(v) == "true";
    else if (k == "tag")
      w.tags.push_back(v);
  }
  return w;
}

Result<DirectUrl> parseDirectUrl(std::string_view text) {
  using nlohmann::json;
  KDK_TRY_STATUS(util::checkJsonNesting(text, "direct_url.json"));
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error::Invalid("direct_url.json is not a JSON object");
  DirectUrl d;
  if (j.contains("url") && j["url"].is_string()) d.url = j["url"].get<std::string>();
  if (d.url.empty()) return Error::Invalid("direct_url.json has no url");
  if (j.contains("dir_info") && j["dir_info"].is_object() && j["dir_info"].contains("editable") &&
      j["dir_info"]["editable"].is_boolean())
    d.editable = j["dir_info"]["editable"].get<bool>();
  if (j.contains("vcs_info") && j["vcs_info"].is_object()) {
    const json& v = j["vcs_info"];
    if (v.contains("vcs") && v["vcs"].is_string()) d.vcs = v["vcs"].get<std::string>();
    if (v.contains("commit_id") && v["commit_id"].is_string()) d.commitId = v["commit_id"].get<std::string>();
  }
  if (j.contains("archive_info") && j["archive_info"].is_object()) {
    const json& a = j["archive_info"];
    if (a.contains("hashes") && a["hashes"].is_object())
      for (auto it = a["hashes"].begin(); it != a["hashes"].end(); ++it)
        if (it.value().is_string()) d.hashes[util::toLower(it.key())] = util::toLower(it.value().get<std::string>());
    if (a.contains("hash") && a["hash"].is_string()) {
      std::string h = a["hash"].get<std::string>();
      size_t eq = h.find('=');
      if (eq != std::string::npos) d.hashes.emplace(util::toLower(h.substr(0, eq)), util::toLower(h.substr(eq + 1)));
    }
  }
  return d;
}

}  // namespace kernodeck::python
