#include "kernodeck/os/os_release.h"

#include "kernodeck/util/strings.h"

namespace kernodeck::os {

std::map<std::string, std::string> parseOsRelease(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& rawLine : util::split(text, '\n')) {
    std::string_view line = util::trim(rawLine);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string key(util::trim(line.substr(0, eq)));
    std::string_view v = util::trim(line.substr(eq + 1));
    std::string value;
    if (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
      char q = v.front();
      for (size_t i = 1; i < v.size() && v[i] != q; ++i) {
        if (v[i] == '\\' && q == '"' && i + 1 < v.size()) ++i;
        value.push_back(v[i]);
      }
    } else {
      value = std::string(v);
    }
    out[key] = value;
  }
  return out;
}

}  // namespace kernodeck::os
