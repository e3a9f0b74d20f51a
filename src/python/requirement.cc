#include "kernodeck/python/requirement.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

// PEP 508 names and extras: ASCII letters and digits, with '.', '-' or '_' inside.
bool isName(std::string_view n) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (n.empty() || !alnum(n.front()) || !alnum(n.back())) return false;
  return std::all_of(n.begin(), n.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool isWs(char c) { return c == ' ' || c == '\t'; }

}  // namespace

// Follows packaging's grammar (src/packaging/_parser.py): whitespace is spaces and tabs only,
// a URL ends at whitespace and only a ';' may follow it, extras are names separated by commas.
Result<Requirement> Requirement::parse(std::string_view raw) {
  std::string_view sv = raw;
  while (!sv.empty() && isWs(sv.front())) sv.remove_prefix(1);
  while (!sv.empty() && isWs(sv.back())) sv.remove_suffix(1);
  std::string s(sv);
  Requirement r;
  r.text = s;
  auto bad = [&](const std::string& why) {
    return Error::Invalid("invalid requirement '" + util::printable(s, 120) + "': " + why);
  };
  if (s.find_first_of("\r\n") != std::string::npos) return bad("a line break");
  size_t i = 0;
  auto isNameChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  };
  while (i < s.size() && isNameChar(s[i])) ++i;
  r.name = s.substr(0, i);
  if (!isName(r.name)) return bad("expected a package name at the start");
  r.key = canonicalizeName(r.name);
  auto ws = [&] {
    while (i < s.size() && isWs(s[i])) ++i;
  };
  ws();
  if (i < s.size() && s[i] == '[') {
    size_t end = s.find(']', i);
    if (end == std::string::npos) return bad("unclosed extras");
    std::string_view inside = util::trim(std::string_view(s).substr(i + 1, end - i - 1));
    if (!inside.empty())
      for (const auto& e : util::split(inside, ',')) {
        std::string x(util::trim(e));
        if (!isName(x))
          return bad(x.empty() ? "expected an extra name after a comma"
                               : "bad extra name '" + util::printable(x, 40) + "'");
        r.extras.push_back(x);
      }
    i = end + 1;
    ws();
  }
  std::string rest = s.substr(i);
  std::string markerText;
  bool hasSemicolon = false;
  if (!rest.empty() && rest.front() == '@') {
    size_t k = 1;
    while (k < rest.size() && isWs(rest[k])) ++k;
    size_t urlEnd = k;
    while (urlEnd < rest.size() && !isWs(rest[urlEnd])) ++urlEnd;
    r.url = rest.substr(k, urlEnd - k);
    if (r.url.empty()) return bad("expected a URL after @");
    k = urlEnd;
    while (k < rest.size() && isWs(rest[k])) ++k;
    if (k < rest.size()) {
      if (rest[k] != ';' || k == urlEnd) return bad("expected a ';' after the URL and whitespace, or the end");
      markerText = rest.substr(k + 1), hasSemicolon = true;
    }
  } else {
    size_t semi = rest.find(';');
    std::string spec(util::trim(std::string_view(rest).substr(0, semi)));
    if (semi != std::string::npos) markerText = rest.substr(semi + 1), hasSemicolon = true;
    if (!spec.empty() && spec.front() == '(') {
      if (spec.back() != ')') return bad("unclosed '('");
      spec = spec.substr(1, spec.size() - 2);
    }
    auto set = SpecifierSet::parse(spec);
    if (!set.ok()) return bad(set.error().message);
    // A trailing comma or an empty part between commas names no specifier.
    if (!util::trim(spec).empty() && set->specs().size() != util::split(spec, ',').size())
      return bad("an empty specifier");
    r.specifier = *set;
  }
  if (hasSemicolon && util::trim(markerText).empty()) return bad("expected a marker after ';'");
  if (hasSemicolon) {
    auto m = Marker::parse(markerText);
    if (!m.ok()) return m.error();
    r.marker = *m;
  }
  return r;
}

namespace {

// packaging's Specifier._canonical_spec: the operator and the version without trailing zeros
// (kept for ~=, whose meaning depends on them); wildcards and === as written.
std::set<std::string> canonicalSpecs(const SpecifierSet& set) {
  std::set<std::string> out;
  for (const auto& sp : set.specs()) {
    auto v = Version::parse(sp.version());
    if (sp.op() == "===" || sp.version().ends_with(".*") || !v.ok()) {
      out.insert(sp.str());
      continue;
    }
    std::string text = v->str();
    if (sp.op() != "~=") {
      std::vector<uint64_t> rel = v->release();
      while (rel.size() > 1 && rel.back() == 0) rel.pop_back();
      std::string release;
      for (size_t i = 0; i < rel.size(); ++i) release += (i ? "." : "") + std::to_string(rel[i]);
      std::string base = v->baseStr();
      size_t bang = base.find('!');
      text = (bang == std::string::npos ? "" : base.substr(0, bang + 1)) + release + text.substr(base.size());
    }
    out.insert(sp.op() + text);
  }
  return out;
}

std::set<std::string> canonicalExtras(const std::vector<std::string>& extras) {
  std::set<std::string> out;
  for (const auto& e : extras) out.insert(canonicalizeName(e));
  return out;
}

}  // namespace

bool Requirement::equivalent(const Requirement& o) const {
  return key == o.key && canonicalExtras(extras) == canonicalExtras(o.extras) && url == o.url &&
         canonicalSpecs(specifier) == canonicalSpecs(o.specifier) && marker.has_value() == o.marker.has_value() &&
         (!marker || marker->canonical() == o.marker->canonical());
}

}  // namespace kernodeck::python
