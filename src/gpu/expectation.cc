#include "kernodeck/gpu/expectation.h"

#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

using nlohmann::json;

namespace {

// The value at `path` when it is present and not null; an error naming the field when an
// object on the way, or the value itself, has the wrong type.
Result<const json*> at(const json& j, std::initializer_list<const char*> path, std::string& name) {
  const json* cur = &j;
  name.clear();
  for (const char* k : path) {
    if (!cur->is_object())
      return Error::Invalid("expectation field '" + name + "' is " + cur->type_name() + ", not an object");
    name += (name.empty() ? "" : ".") + std::string(k);
    auto it = cur->find(k);
    if (it == cur->end() || it->is_null()) return static_cast<const json*>(nullptr);
    cur = &*it;
  }
  return cur;
}

Result<std::string> getStr(const json& j, std::initializer_list<const char*> path) {
  std::string name;
  KDK_TRY_ASSIGN(const json* v, at(j, path, name));
  if (!v) return std::string();
  if (!v->is_string())
    return Error::Invalid("expectation field '" + name + "' is " + v->type_name() + ", not a string");
  return v->get<std::string>();
}

Result<std::vector<std::string>> getList(const json& j, std::initializer_list<const char*> path) {
  std::string name;
  KDK_TRY_ASSIGN(const json* v, at(j, path, name));
  std::vector<std::string> out;
  if (!v) return out;
  if (!v->is_array())
    return Error::Invalid("expectation field '" + name + "' is " + v->type_name() + ", not an array of strings");
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string())
      return Error::Invalid("expectation field '" + name + "[" + std::to_string(i) + "]' is " + (*v)[i].type_name() +
                            ", not a string");
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

}  // namespace

Result<Expectation> parseExpectation(std::string_view text) {
  KDK_TRY_STATUS(util::checkJsonNesting(text, "expectation"));
  json j = util::parseUntrustedJson(text);
  if (j.is_discarded()) return Error::Invalid("expectation is not valid JSON (truncated or malformed)");
  return expectationFromJson(j);
}

Result<Expectation> expectationFromJson(const json& j) {
  if (!j.is_object()) return Error::Invalid(std::string("expectation is a JSON ") + j.type_name() + ", not an object");
  auto schema = getStr(j, {"schema"});
  if (!schema.ok() || *schema != "kernodeck.expect/v1")
    return Error::Invalid("expectation schema is '" +
                          (schema.ok() ? util::printable(*schema, 60) : std::string("(not a string)")) +
                          "', not kernodeck.expect/v1");
  Expectation e;
  KDK_TRY_ASSIGN(e.accelerator, getStr(j, {"accelerator"}));
  if (!e.accelerator.empty() && e.accelerator != "cuda" && e.accelerator != "rocm" && e.accelerator != "cpu")
    return Error::Invalid("expectation field 'accelerator' is '" + util::printable(e.accelerator, 40) +
                          "', not cuda, rocm or cpu");
  KDK_TRY_ASSIGN(e.imageDigest, getStr(j, {"image", "digest"}));
  KDK_TRY_ASSIGN(e.torchVersion, getStr(j, {"torch", "version"}));
  KDK_TRY_ASSIGN(e.torchCuda, getStr(j, {"torch", "cuda"}));
  KDK_TRY_ASSIGN(e.torchHip, getStr(j, {"torch", "hip"}));
  KDK_TRY_ASSIGN(e.torchArchList, getList(j, {"torch", "arch_list"}));
  KDK_TRY_ASSIGN(e.cudaRuntime, getStr(j, {"cuda", "runtime"}));
  KDK_TRY_ASSIGN(e.compatDriverBranches, getList(j, {"cuda", "compat_driver_branches"}));
  KDK_TRY_ASSIGN(e.nvidiaRequire, getList(j, {"nvidia", "require"}));
  std::string name;
  KDK_TRY_ASSIGN(const json* libs, at(j, {"cuda", "compat_libraries"}, name));
  if (libs && !libs->is_array())
    return Error::Invalid("expectation field 'cuda.compat_libraries' is " + std::string(libs->type_name()) +
                          ", not an array");
  for (size_t i = 0; libs && i < libs->size(); ++i) {
    const json& l = (*libs)[i];
    std::string where = "cuda.compat_libraries[" + std::to_string(i) + "]";
    auto ints = [&](const char* key, std::vector<int>& out) -> Status {
      if (!l.contains(key) || l[key].is_null()) return {};
      if (!l[key].is_array()) return Error::Invalid("expectation field '" + where + "." + key + "' is not an array");
      for (const auto& x : l[key]) {
        if (!x.is_number_integer())
          return Error::Invalid("expectation field '" + where + "." + key + "' holds a non-integer");
        out.push_back(x.get<int>());
      }
      return {};
    };
    if (!l.is_object()) return Error::Invalid("expectation field '" + where + "' is not an object");
    CompatLibraryNote c;
    KDK_TRY_ASSIGN(c.path, getStr(l, {"path"}));
    KDK_TRY_ASSIGN(c.driver, getStr(l, {"driver"}));
    KDK_TRY_ASSIGN(c.note.cudaVersion, getStr(l, {"cuda"}));
    KDK_TRY_STATUS(ints("driver_branches", c.note.driverBranches));
    KDK_TRY_STATUS(ints("devices", c.note.devices));
    e.compatLibraries.push_back(std::move(c));
  }
  KDK_TRY_ASSIGN(const json* code, at(j, {"gpu_code"}, name));
  if (code && !code->is_array())
    return Error::Invalid("expectation field 'gpu_code' is " + std::string(code->type_name()) + ", not an array");
  for (size_t i = 0; code && i < code->size(); ++i) {
    const json& l = (*code)[i];
    if (!l.is_object())
      return Error::Invalid("expectation field 'gpu_code[" + std::to_string(i) + "]' is not an object");
    GpuCode g;
    KDK_TRY_ASSIGN(g.library, getStr(l, {"library"}));
    KDK_TRY_ASSIGN(g.layer, getStr(l, {"layer"}));
    KDK_TRY_ASSIGN(g.sass, getList(l, {"sass"}));
    KDK_TRY_ASSIGN(g.ptx, getList(l, {"ptx"}));
    if (l.contains("compressed") && !l["compressed"].is_null()) {
      if (!l["compressed"].is_boolean())
        return Error::Invalid("expectation field 'gpu_code[" + std::to_string(i) + "].compressed' is not a boolean");
      g.compressed = l["compressed"].get<bool>();
    }
    e.gpuCode.push_back(std::move(g));
  }
  return e;
}

json Expectation::toJson() const {
  auto orNull = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  json out = {{"schema", "kernodeck.expect/v1"},
          {"accelerator", orNull(accelerator)},
          {"image", {{"digest", orNull(imageDigest)}}},
          {"torch",
           {{"version", orNull(torchVersion)},
            {"cuda", orNull(torchCuda)},
            {"hip", orNull(torchHip)},
            {"arch_list", torchArchList}}},
          {"cuda",
           {{"runtime", orNull(cudaRuntime)},
            {"compat_driver_branches", compatDriverBranches},
            {"compat_libraries",
             [&] {
               json libs = json::array();
               for (const auto& c : compatLibraries)
                 libs.push_back({{"path", c.path},
                                 {"driver", c.driver},
                                 {"cuda", orNull(c.note.cudaVersion)},
                                 {"driver_branches", c.note.driverBranches},
                                 {"devices", c.note.devices}});
               return libs;
             }()}}},
          {"nvidia", {{"require", nvidiaRequire}}}};
  // Only when the audit read GPU code: an image without any keeps the document it had.
  for (const auto& g : gpuCode)
    out["gpu_code"].push_back({{"library", g.library},
                               {"layer", orNull(g.layer)},
                               {"sass", g.sass},
                               {"ptx", g.ptx},
                               {"compressed", g.compressed}});
  return out;
}

}  // namespace kernodeck::gpu
