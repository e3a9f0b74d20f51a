#include "kernodeck/gpu/expectation.h"

namespace kernodeck::gpu {

using nlohmann::json;

namespace {

std::string getStr(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return {};
    cur = &(*cur)[k];
  }
  return cur->is_string() ? cur->get<std::string>() : std::string();
}

std::vector<std::string> getList(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return {};
    cur = &(*cur)[k];
  }
  std::vector<std::string> out;
  if (cur->is_array())
    for (const auto& v : *cur)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

Result<Expectation> parseExpectation(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error::Invalid("expectation is not a JSON object");
  if (getStr(j, {"schema"}) != "kernodeck.expect/v1")
    return Error::Invalid("expectation schema is '" + getStr(j, {"schema"}).substr(0, 60) + "', not kernodeck.expect/v1");
  Expectation e;
  e.accelerator = getStr(j, {"accelerator"});
  e.imageDigest = getStr(j, {"image", "digest"});
  e.torchVersion = getStr(j, {"torch", "version"});
  e.torchCuda = getStr(j, {"torch", "cuda"});
  e.torchHip = getStr(j, {"torch", "hip"});
  e.torchArchList = getList(j, {"torch", "arch_list"});
  e.cudaRuntime = getStr(j, {"cuda", "runtime"});
  e.compatDriverBranches = getList(j, {"cuda", "compat_driver_branches"});
  e.nvidiaRequire = getList(j, {"nvidia", "require"});
  return e;
}

json Expectation::toJson() const {
  auto orNull = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"schema", "kernodeck.expect/v1"},
          {"accelerator", orNull(accelerator)},
          {"image", {{"digest", orNull(imageDigest)}}},
          {"torch", {{"version", orNull(torchVersion)}, {"cuda", orNull(torchCuda)}, {"hip", orNull(torchHip)},
                     {"arch_list", torchArchList}}},
          {"cuda", {{"runtime", orNull(cudaRuntime)}, {"compat_driver_branches", compatDriverBranches}}},
          {"nvidia", {{"require", nvidiaRequire}}}};
}

}  // namespace kernodeck::gpu
