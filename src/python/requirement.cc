#include "kernodeck/python/requirement.h"

#include <cctype>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

Result<Requirement> Requirement::parse(std::string_view raw) {
  std::string s(util::trim(raw));
  Requirement r;
  r.text = s;
  auto bad = [&](const std::string& why) { return Error::Invalid("invalid requirement '" + util::printable(s, 120) + "': " + why); };
  size_t i = 0;
  auto isNameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  while (i < s.size() && isNameChar(s[i])) ++i;
  r.name = s.substr(0, i);
  if (r.name.empty() || !std::isalnum(static_cast<unsigned char>(r.name.front())) ||
      !std::isalnum(static_cast<unsigned char>(r.name.back())))
    return bad("bad name");
  r.key = canonicalizeName(r.name);
  auto ws = [&] { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; };
  ws();
  if (i < s.size() && s[i] == '[') {
    size_t end = s.find(']', i);
    if (end == std::string::npos) return bad("unclosed extras");
    for (const auto& e : util::split(std::string_view(s).substr(i + 1, end - i - 1), ',')) {
      std::string x(util::trim(e));
      if (x.empty()) continue;
      r.extras.push_back(x);
    }
    i = end + 1;
    ws();
  }
  // The marker starts at the first ';' (for URL requirements, one preceded by whitespace).
  std::string rest = s.substr(i);
  std::string markerText;
  bool hasSemicolon = false;
  if (!rest.empty() && rest.front() == '@') {
    std::string urlPart(util::trim(std::string_view(rest).substr(1)));
    size_t semi = std::string::npos;
    for (size_t k = 1; k < urlPart.size(); ++k)
      if (urlPart[k] == ';' && std::isspace(static_cast<unsigned char>(urlPart[k - 1]))) {
        semi = k;
        break;
      }
    r.url = std::string(util::trim(std::string_view(urlPart).substr(0, semi)));
    if (semi != std::string::npos) markerText = urlPart.substr(semi + 1), hasSemicolon = true;
    if (r.url.empty()) return bad("empty URL");
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

}  // namespace kernodeck::python
