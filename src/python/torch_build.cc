#include "kernodeck/python/torch_build.h"

#include <regex>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

std::optional<TorchVersionPy> parseTorchVersionPy(std::string_view text) {
  static const std::regex assign(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(.+?)\s*$)");
  TorchVersionPy t;
  bool any = false;
  for (const auto& line : util::split(text.substr(0, 65536), '\n')) {
    std::smatch m;
    if (!std::regex_match(line, m, assign)) continue;
    std::string key = m[1].str(), raw = m[2].str();
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
