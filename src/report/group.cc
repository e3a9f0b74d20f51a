#include "kernodeck/report/group.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace kernodeck::report {

std::vector<std::string> FindingGroup::paths() const {
  std::vector<std::string> out;
  for (const Finding* f : members)
    if (auto p = f->evidenceOf("path"); !p.empty()) out.push_back(p);
  return out;
}

std::string FindingGroup::headline() const {
  if (members.size() == 1) return members.front()->message;
  std::string h = std::to_string(members.size()) + " findings";
  if (!package.empty())
    h += " for package " + package;
  else if (!layer.empty())
    h += " in layer " + layer;
  return h;
}

std::vector<FindingGroup> groupFindings(const std::vector<Finding>& findings) {
  std::vector<FindingGroup> groups;
  std::map<std::tuple<int, std::string, std::string, std::string, std::string, int>, size_t> index;
  for (const auto& f : findings) {
    std::string package = f.evidenceOf("package");
    std::string layer = package.empty() ? f.evidenceOf("layer") : "";
    auto key = std::make_tuple(static_cast<int>(f.severity), f.code, package, layer,
                               f.suppression ? f.suppression->file : std::string(),
                               f.suppression ? f.suppression->entry : -1);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.push_back(FindingGroup{f.code, f.severity, package, layer, {}, f.suppression});
    groups[it->second].members.push_back(&f);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const FindingGroup& a, const FindingGroup& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return groups;
}

}  // namespace kernodeck::report
