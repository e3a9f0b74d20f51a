#include "kernodeck/python/torch_build.h"


#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

bool identStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool identChar(char c) { return identStart(c) || (c >= '0' && c <= '9'); }

// One line of torch/version.py as `NAME [: ANNOTATION] = VALUE` (the regex
// `^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(.+?)\s*$` it replaced), scanned by hand: the
// file is the image's, and std::regex recursed once per character of a long line.
bool assignment(std::string_view l, std::string& key, std::string& raw) {
  size_t i = 0;
  while (i < l.size() && util::isSpace(l[i])) ++i;
  if (i >= l.size() || !identStart(l[i])) return false;
  size_t k = i;
  while (i < l.size() && identChar(l[i])) ++i;
  key = std::string(l.substr(k, i - k));
  while (i < l.size() && util::isSpace(l[i])) ++i;
  if (i < l.size() && l[i] == ':') i = l.find('=', i);
  if (i == std::string_view::npos || i >= l.size() || l[i] != '=') return false;
  size_t afterEq = ++i;
  while (i < l.size() && util::isSpace(l[i])) ++i;
  size_t e = l.size();
  while (e > i && util::isSpace(l[e - 1])) --e;
  if (e == i) {  // only spaces after '=': the regex took the last of them that is no line end
    for (size_t k = l.size(); k > afterEq; --k)
      if (l[k - 1] != '\r' && l[k - 1] != '\n') return raw = std::string(1, l[k - 1]), true;
    return false;
  }
  std::string_view v = l.substr(i, e - i);
  if (v.find('\r') != std::string_view::npos || v.find('\n') != std::string_view::npos) return false;  // `.`
  raw = std::string(v);
  return true;
}

}  // namespace

std::optional<TorchVersionPy> parseTorchVersionPy(std::string_view text) {
  TorchVersionPy t;
  bool any = false;
  for (const auto& line : util::split(text.substr(0, 65536), '\n')) {
    std::string key, raw;
    if (!assignment(line, key, raw)) continue;
    std::string value;
    if (raw.size() >= 2 && (raw.front() == '\'' || raw.front() == '"') && raw.back() == raw.front())
      value = raw.substr(1, raw.size() - 2);
    else if (raw == "None")
      value = "";
    else
      value = raw;
    if (key == "__version__")
      t.version = value, any = true;
    else if (key == "cuda")
      t.cuda = value;
    else if (key == "hip")
      t.hip = value;
    else if (key == "git_version")
      t.gitVersion = value;
    else if (key == "debug")
      t.debug = value == "True";
  }
  if (!any) return std::nullopt;
  return t;
}

TorchBuild readTorchBuild(const oci::FsView& v, const std::vector<PythonEnv>& envs) {
  TorchBuild b;
  for (const auto& e : envs) {
    for (const auto& d : e.distributions) {
      if (d.key.rfind("nvidia-", 0) == 0 && !b.nvidiaWheels.count(d.key)) b.nvidiaWheels[d.key] = d.version;
      if (d.key == "torch" && !b.torch) {
        if (auto t = v.readFile(d.location + "/torch/version.py", 65536); t.ok()) {
          b.torch = parseTorchVersionPy(*t);
          b.torchLocation = d.location;
        }
      }
    }
  }
  return b;
}

}  // namespace kernodeck::python
