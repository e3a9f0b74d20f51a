// See path.h.
#include "kernodeck/util/path.h"

#include <vector>

namespace kernodeck::util {

namespace {

// Calls f(component) for each component of `p` between slashes, empty ones included.
template <class F>
void forEachComponent(std::string_view p, F f) {
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    f(p.substr(start, end - start));
    start = end + 1;
  }
}

std::string joinComponents(const std::vector<std::string_view>& parts) {
  std::string out;
  for (auto c : parts) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

}  // namespace

bool isNormalPath(std::string_view p) {
  if (p.empty()) return false;
  bool normal = true;
  forEachComponent(p, [&](std::string_view c) { normal = normal && !c.empty() && c != "." && c != ".."; });
  return normal;
}

std::optional<std::string> cleanConfined(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) return std::nullopt;
  if (isNormalPath(path)) return std::string(path);  // most paths: no list of components (issue 31)
  std::vector<std::string_view> parts;
  bool escapes = false;
  forEachComponent(path, [&](std::string_view c) {
    if (c.empty() || c == ".") return;
    if (c != "..")
      parts.push_back(c);
    else if (parts.empty())
      escapes = true;
    else
      parts.pop_back();
  });
  if (escapes) return std::nullopt;
  return joinComponents(parts);
}

RootedPath cleanRooted(std::string_view path) {
  RootedPath r;
  if (isNormalPath(path)) {  // most names: no list of components (issue 31)
    r.path = path;
    return r;
  }
  r.absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  forEachComponent(path, [&](std::string_view c) {
    if (c.empty() || c == ".") return;
    if (c != "..") {
      parts.push_back(c);
      return;
    }
    r.dotdot = true;
    if (!parts.empty()) parts.pop_back();  // at the root, ".." stays at the root
  });
  r.path = joinComponents(parts);
  return r;
}

}  // namespace kernodeck::util
