// Parses a kernodeck.host/v1 record into HostFacts. See host_record.h.
#include "kernodeck/host/host_record.h"
#include "kernodeck/util/json_read.h"

#include <nlohmann/json.hpp>

namespace kernodeck::host {
namespace {

using nlohmann::json;

const char* kNotARecord = "is not a kernodeck.host/v1 record";

Error fieldError(const std::string& field, const std::string& what) {
  return Error::Invalid(std::string(kNotARecord) + ": " + field + " is not " + what);
}

// Reads the string field `key` of `obj` (named `at` in errors) into `out`; absent or null leaves it.
Status readString(const json& obj, const char* key, const std::string& at, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) return fieldError(at + "." + key, "a string");
  out = it->get<std::string>();
  return {};
}

Status readInt(const json& obj, const char* key, const std::string& at, int& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_number_integer() || it->get<int64_t>() < -1 || it->get<int64_t>() > (1 << 20))
    return fieldError(at + "." + key, "an integer from -1 to 1048576");
  out = it->get<int>();
  return {};
}

Status readBool(const json& obj, const char* key, const std::string& at, bool& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_boolean()) return fieldError(at + "." + key, "true or false");
  out = it->get<bool>();
  return {};
}

Result<NvidiaGpu> parseGpu(const json& g, const std::string& at) {
  if (!g.is_object()) return fieldError(at, "an object");
  NvidiaGpu gpu;
  for (auto [key, out] : {std::pair{"model", &gpu.model},
                          {"uuid", &gpu.uuid},
                          {"bus_location", &gpu.busLocation},
                          {"arch", &gpu.arch},
                          {"brand", &gpu.brand}})
    KDK_TRY_STATUS(readString(g, key, at, *out));
  KDK_TRY_STATUS(readInt(g, "minor", at, gpu.minor));
  KDK_TRY_STATUS(readBool(g, "excluded", at, gpu.excluded));
  return gpu;
}

Status parseNvidia(const json& nv, HostFacts& h) {
  const std::string at = "host.nvidia";
  if (!nv.is_object()) return fieldError(at, "an object or null");
  NvidiaDriver d;
  KDK_TRY_STATUS(readString(nv, "driver_version", at, d.version));
  std::string module;
  KDK_TRY_STATUS(readString(nv, "kernel_module", at, module));
  d.openModule = module == "open";
  KDK_TRY_STATUS(readString(nv, "max_cuda", at, h.maxCuda));
  h.nvidia = d;
  auto gpus = nv.find("gpus");
  if (gpus == nv.end() || gpus->is_null()) return {};
  if (!gpus->is_array()) return fieldError(at + ".gpus", "an array");
  for (size_t i = 0; i < gpus->size(); ++i) {
    NvidiaGpu g;
    KDK_TRY_ASSIGN(g, parseGpu((*gpus)[i], at + ".gpus[" + std::to_string(i) + "]"));
    h.gpus.push_back(std::move(g));
  }
  return {};
}

}  // namespace

Result<HostFacts> parseHostRecord(std::string_view text) {
  json j = util::parseUntrustedJson(text);
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "kernodeck.host/v1") return Error::Invalid(kNotARecord);
  HostFacts h;
  auto host = j.find("host");
  if (host == j.end() || host->is_null()) return h;
  if (!host->is_object()) return fieldError("host", "an object");
  KDK_TRY_STATUS(readString(*host, "root", "host", h.root));
  if (auto nv = host->find("nvidia"); nv != host->end() && !nv->is_null()) KDK_TRY_STATUS(parseNvidia(*nv, h));
  return h;
}

}  // namespace kernodeck::host
