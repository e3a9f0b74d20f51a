// The editable-install finder modules pip writes (__editable___NAME_finder.py), read by hand:
// their text is the image's, of any length, and the std::regex that read them recursed once per
// character. See environment.h.
#include "kernodeck/python/environment.h"

#include <cctype>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {
size_t skipSpaces(std::string_view s, size_t i) {
  while (i < s.size() && util::isSpace(s[i])) ++i;
  return i;
}
}  // namespace

std::string editableFinderImport(std::string_view t) {
  // ^import (__editable___[A-Za-z0-9_]+_finder);
  constexpr std::string_view kImport = "import ", kPrefix = "__editable___", kSuffix = "_finder";
  if (!t.starts_with(kImport)) return "";
  size_t b = kImport.size(), e = b;
  while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_')) ++e;
  std::string_view name = t.substr(b, e - b);
  if (e >= t.size() || t[e] != ';' || name.size() < kPrefix.size() + 1 + kSuffix.size() ||
      !name.starts_with(kPrefix) || !name.ends_with(kSuffix))
    return "";
  return std::string(name);
}

std::string editableFinderMapping(std::string_view t) {
  // MAPPING\s*(?::[^=]*)?=\s*\{\s*'[^']*'\s*:\s*'([^']+)', the first occurrence that matches.
  constexpr std::string_view kKey = "MAPPING";
  for (size_t at = t.find(kKey); at != std::string_view::npos; at = t.find(kKey, at + 1)) {
    size_t i = skipSpaces(t, at + kKey.size());
    if (i < t.size() && t[i] == ':') i = t.find('=', i);
    if (i == std::string_view::npos || i >= t.size() || t[i] != '=') continue;
    i = skipSpaces(t, i + 1);
    if (i >= t.size() || t[i] != '{') continue;
    i = skipSpaces(t, i + 1);
    if (i >= t.size() || t[i] != '\'') continue;
    size_t close = t.find('\'', i + 1);
    if (close == std::string_view::npos) continue;
    i = skipSpaces(t, close + 1);
    if (i >= t.size() || t[i] != ':') continue;
    i = skipSpaces(t, i + 1);
    if (i >= t.size() || t[i] != '\'') continue;
    size_t end = t.find('\'', i + 1);
    if (end == std::string_view::npos || end == i + 1) continue;
    return std::string(t.substr(i + 1, end - i - 1));
  }
  return "";
}

}  // namespace kernodeck::python
