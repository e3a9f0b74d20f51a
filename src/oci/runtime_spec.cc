#include "kernodeck/oci/runtime_spec.h"

#include <nlohmann/json.hpp>

#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

std::string str(const json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
}

std::map<std::string, std::string> annotationsOf(const json& j) {
  std::map<std::string, std::string> out;
  if (j.contains("annotations") && j["annotations"].is_object())
    for (auto it = j["annotations"].begin(); it != j["annotations"].end(); ++it)
      if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  return out;
}

}  // namespace

Result<RuntimeState> parseRuntimeState(std::string_view text) {
  if (util::trim(text).empty()) return Error::Invalid("container state on stdin is empty");
  KDK_TRY_STATUS(util::checkJsonNesting(text, "container state on stdin"));
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error::Invalid("container state on stdin is not a JSON object");
  RuntimeState s;
  s.ociVersion = str(j, "ociVersion");
  s.id = str(j, "id");
  s.status = str(j, "status");
  s.bundle = str(j, "bundle");
  if (j.contains("pid") && j["pid"].is_number_integer()) s.pid = j["pid"].get<int64_t>();
  s.annotations = annotationsOf(j);
  if (s.id.empty()) return Error::Invalid("container state has no id");
  if (s.bundle.empty()) return Error::Invalid("container state " + util::printable(s.id, 80) + " has no bundle");
  return s;
}

Result<ContainerSpec> parseContainerConfig(std::string_view text, const std::string& bundle) {
  KDK_TRY_STATUS(util::checkJsonNesting(text, bundle + "/config.json"));
  // Only the parts read below are built (a runtime's config.json is mostly mounts, capabilities
  // and a seccomp profile, tens of KiB under podman, which a hook at every container start would
  // otherwise turn into a document and throw away).
  std::string top;
  json::parser_callback_t keep = [&top](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key || depth > 2) return true;
    const std::string& k = parsed.get_ref<const std::string&>();
    if (depth == 1) {
      top = k;
      return k == "root" || k == "process" || k == "linux" || k == "annotations" || k == "hooks";
    }
    if (top == "process") return k == "env" || k == "user";
    if (top == "linux") return k == "devices";
    return true;
  };
  json j = json::parse(text.begin(), text.end(), keep, false);
  if (j.is_discarded() || !j.is_object()) return Error::Invalid(bundle + "/config.json is not a JSON object");
  ContainerSpec c;
  if (j.contains("root") && j["root"].is_object()) {
    std::string p = str(j["root"], "path");
    if (p.empty()) p = "rootfs";
    c.rootPath = p.front() == '/' ? p : bundle + "/" + p;
    c.rootReadonly =
        j["root"].contains("readonly") && j["root"]["readonly"].is_boolean() && j["root"]["readonly"].get<bool>();
  }
  if (j.contains("process") && j["process"].is_object()) {
    const json& p = j["process"];
    if (p.contains("env") && p["env"].is_array())
      for (const auto& e : p["env"]) {
        if (!e.is_string()) continue;
        std::string s = e.get<std::string>();
        size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        c.env[s.substr(0, eq)] = s.substr(eq + 1);
      }
    if (p.contains("user") && p["user"].is_object() && p["user"].contains("additionalGids") &&
        p["user"]["additionalGids"].is_array())
      for (const auto& g : p["user"]["additionalGids"])
        if (g.is_number_unsigned()) c.additionalGids.push_back(g.get<uint32_t>());
  }
  if (j.contains("linux") && j["linux"].is_object() && j["linux"].contains("devices") &&
      j["linux"]["devices"].is_array())
    for (const auto& d : j["linux"]["devices"]) {
      if (!d.is_object()) continue;
      LinuxDevice ld{str(d, "path"), str(d, "type"), -1, -1};
      if (d.contains("major") && d["major"].is_number_integer()) ld.major = d["major"].get<int64_t>();
      if (d.contains("minor") && d["minor"].is_number_integer()) ld.minor = d["minor"].get<int64_t>();
      if (!ld.path.empty()) c.devices.push_back(ld);
    }
  c.annotations = annotationsOf(j);
  if (j.contains("hooks") && j["hooks"].is_object())
    for (auto it = j["hooks"].begin(); it != j["hooks"].end(); ++it)
      if (it.value().is_array())
        for (const auto& h : it.value())
          if (h.is_object() && h.contains("path") && h["path"].is_string())
            c.hookPaths.push_back(h["path"].get<std::string>());
  return c;
}

}  // namespace kernodeck::oci
