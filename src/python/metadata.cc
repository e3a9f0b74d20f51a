#include "kernodeck/python/metadata.h"

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

std::vector<std::string> csvFields(std::string_view line) {
  std::vector<std::string> f;
  if (line.find('"') == std::string_view::npos) {  // no quoting (nearly every row): fields as they are
    for (auto field : util::splitView(line, ',')) f.emplace_back(field);
    return f;
  }
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"' && cur.empty()) {
      quoted = true;
    } else if (c == ',') {
      f.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  f.push_back(cur);
  return f;
}

}  // namespace

std::vector<RecordRow> parseRecord(std::string_view text) {
  std::vector<RecordRow> rows;
  for (std::string_view line : util::splitView(text, '\n')) {  // RECORD: one row per file (issue 31: no copies)
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (util::trim(line).empty()) continue;
    auto f = csvFields(line);
    RecordRow r;
    r.path = std::move(f[0]);
    if (f.size() > 1 && !f[1].empty()) {
      size_t eq = f[1].find('=');
      if (eq == std::string::npos || eq == 0) {
        r.malformed = true;
      } else {
        r.algorithm = util::toLower(f[1].substr(0, eq));
        r.digest = f[1].substr(eq + 1);
        if (!r.digest.empty() && r.digest.back() == '=') r.malformed = true;  // padded: tolerated, reported
      }
    }
    if (f.size() > 2) r.size = f[2];
    if (f.size() > 3) r.malformed = true;
    rows.push_back(std::move(r));
  }
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
