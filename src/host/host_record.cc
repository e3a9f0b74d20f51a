// Writes and reads kernodeck.host/v1 records. See host_record.h. Every field is read through
// util::JsonReader; absent and null fields keep their defaults.
#include "kernodeck/host/host_record.h"

namespace kernodeck::host {
namespace {

using nlohmann::json;
using util::JsonReader;

const char* kNotARecord = "is not a kernodeck.host/v1 record";

// An optional integer member that must fit the int fields of HostFacts (minors, indexes).
Status getSmallInt(const JsonReader& r, std::string_view key, int& out, bool nullable) {
  int64_t v = out;
  KDK_TRY_STATUS(r.getOpt(key, v, nullable));
  if (v < -1 || v > (1 << 20))
    return Error::Invalid(r.fieldPath(key) + " is " + std::to_string(v) + ", expected an integer from -1 to 1048576");
  out = static_cast<int>(v);
  return {};
}

// The member `key` when present and not null: an object (nullopt when absent or null).
Result<std::optional<JsonReader>> optObjectOrNull(const JsonReader& r, std::string_view key) {
  if (!r.has(key) || r.json().at(std::string(key)).is_null()) return std::optional<JsonReader>();
  return r.optObject(key);
}

// An array member that may be absent, or null too when `nullable` (then: none).
Result<std::vector<JsonReader>> optArrayOrNull(const JsonReader& r, std::string_view key, bool nullable) {
  if (nullable && r.has(key) && r.json().at(std::string(key)).is_null()) return std::vector<JsonReader>();
  return r.optArray(key);
}

Result<std::vector<DeviceNode>> parseNodes(const JsonReader& parent, bool withNumbers, bool n) {
  KDK_TRY_ASSIGN(auto items, optArrayOrNull(parent, "device_nodes", n));
  std::vector<DeviceNode> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    KDK_TRY_STATUS(items[i].expectObject());
    KDK_TRY_STATUS(items[i].getOpt("path", out[i].path, n));
    KDK_TRY_STATUS(items[i].getOpt("present", out[i].present, n));
    if (withNumbers) {
      KDK_TRY_STATUS(getSmallInt(items[i], "major", out[i].major, n));
      KDK_TRY_STATUS(getSmallInt(items[i], "minor", out[i].minor, n));
    }
    KDK_TRY_STATUS(items[i].getOpt("problem", out[i].problem, true));
  }
  return out;
}

Status parseNvidia(const JsonReader& nv, HostFacts& h, bool n) {
  NvidiaDriver d;
  std::string module;
  KDK_TRY_STATUS(nv.getOpt("driver_version", d.version, n));
  KDK_TRY_STATUS(nv.getOpt("kernel_module", module, n));
  d.openModule = module == "open";
  KDK_TRY_STATUS(nv.getOpt("max_cuda", h.maxCuda, n));
  h.nvidia = d;
  KDK_TRY_ASSIGN(auto gpus, optArrayOrNull(nv, "gpus", n));
  for (const auto& g : gpus) {
    NvidiaGpu gpu;
    KDK_TRY_STATUS(g.expectObject());
    for (auto [key, out] : {std::pair{"model", &gpu.model},
                            {"uuid", &gpu.uuid},
                            {"bus_location", &gpu.busLocation},
                            {"arch", &gpu.arch},
                            {"brand", &gpu.brand},
                            {"pci_device", &gpu.pciDevice}})
      KDK_TRY_STATUS(g.getOpt(key, *out, n));
    KDK_TRY_STATUS(getSmallInt(g, "minor", gpu.minor, n));
    KDK_TRY_STATUS(g.getOpt("excluded", gpu.excluded, n));
    h.gpus.push_back(std::move(gpu));
  }
  KDK_TRY_ASSIGN(h.nodes, parseNodes(nv, true, n));
  KDK_TRY_ASSIGN(auto mig, optArrayOrNull(nv, "mig", n));
  for (const auto& m : mig) {
    MigDevice dev;
    KDK_TRY_STATUS(m.expectObject());
    KDK_TRY_STATUS(getSmallInt(m, "gpu", dev.gpu, n));
    KDK_TRY_STATUS(getSmallInt(m, "gi", dev.gi, n));
    KDK_TRY_STATUS(getSmallInt(m, "ci", dev.ci, n));
    KDK_TRY_STATUS(getSmallInt(m, "minor", dev.minor, n));
    h.mig.push_back(dev);
  }
  KDK_TRY_STATUS(nv.getOpt("dev_char_missing", h.devCharMissing, n));
  return {};
}

Status parseAmd(const JsonReader& amd, HostFacts& h, bool n) {
  h.amdDriver = true;
  KDK_TRY_STATUS(amd.getOpt("amdgpu_version", h.amdgpuVersion, n));
  KDK_TRY_ASSIGN(auto agents, optArrayOrNull(amd, "agents", n));
  for (const auto& a : agents) {
    AmdAgent agent;
    KDK_TRY_STATUS(a.expectObject());
    KDK_TRY_STATUS(getSmallInt(a, "node", agent.node, n));
    KDK_TRY_STATUS(a.getOpt("gfx", agent.gfx, n));
    KDK_TRY_STATUS(getSmallInt(a, "render_minor", agent.renderMinor, n));
    h.amdAgents.push_back(std::move(agent));
  }
  KDK_TRY_ASSIGN(h.amdNodes, parseNodes(amd, false, n));
  return {};
}

Status parseVerdicts(const JsonReader& root, HostRecord& rec) {
  KDK_TRY_ASSIGN(auto items, optArrayOrNull(root, "verdicts", true));
  for (const auto& v : items) {
    HostRecord::Verdict out;
    KDK_TRY_STATUS(v.expectObject());
    KDK_TRY_STATUS(v.get("code", out.code));
    KDK_TRY_STATUS(v.get("severity", out.severity));
    KDK_TRY_STATUS(v.get("message", out.message));
    // Every other member is evidence, and evidence is text.
    for (auto it = v.json().begin(); it != v.json().end(); ++it) {
      if (it.key() == "code" || it.key() == "severity" || it.key() == "message") continue;
      KDK_TRY_STATUS(v.get(it.key(), out.evidence[it.key()]));
    }
    rec.verdicts.push_back(std::move(out));
  }
  return {};
}

Status parseRecord(const JsonReader& root, HostRecord& rec) {
  KDK_TRY_STATUS(root.getOpt("kernodeck_version", rec.kernodeckVersion, true));
  KDK_TRY_STATUS(root.getOpt("time", rec.time, true));
  KDK_TRY_ASSIGN(auto container, optObjectOrNull(root, "container"));
  if (container) {
    KDK_TRY_STATUS(container->getOpt("id", rec.container.id, true));
    KDK_TRY_STATUS(container->getOpt("bundle", rec.container.bundle, true));
    KDK_TRY_STATUS(container->getOpt("pid", rec.container.pid, true));
  }
  KDK_TRY_ASSIGN(auto host, optObjectOrNull(root, "host"));
  if (host) {
    KDK_TRY_ASSIGN(rec.host, parseHostFacts(*host, Nulls::Absent));
  }
  KDK_TRY_STATUS(root.getOpt("gpu_container", rec.gpuContainer, true));
  KDK_TRY_STATUS(root.getOpt("vendor", rec.vendor, true));
  KDK_TRY_STATUS(root.getOpt("requested_gpus", rec.requestedGpus, true));
  KDK_TRY_STATUS(root.getOpt("passed_nodes", rec.passedNodes, true));
  if (root.has("expectation") && !root.json().at("expectation").is_null()) {
    auto e = gpu::expectationFromJson(root.json().at("expectation"));
    if (!e.ok()) return Error::Invalid(root.fieldPath("expectation") + ": " + e.error().message);
    rec.expectation = std::move(*e);
  }
  if (root.has("forward_compat") && !root.json().at("forward_compat").is_null()) {
    KDK_TRY_ASSIGN(auto libs, root.array("forward_compat"));
    for (const auto& l : libs) KDK_TRY_STATUS(l.expectObject());
    rec.forwardCompat = root.json().at("forward_compat");
  }
  KDK_TRY_STATUS(parseVerdicts(root, rec));
  KDK_TRY_STATUS(root.getOpt("policy", rec.policy, true));
  KDK_TRY_STATUS(root.getOpt("runs", rec.runs, true));
  KDK_TRY_STATUS(root.getOpt("log_error", rec.logError, true));
  KDK_TRY_STATUS(root.getOpt("decision", rec.decision, true));
  return {};
}

}  // namespace

Result<HostFacts> parseHostFacts(const JsonReader& host, Nulls nulls) {
  bool n = nulls == Nulls::Absent;
  KDK_TRY_STATUS(host.expectObject());
  HostFacts h;
  KDK_TRY_STATUS(host.getOpt("root", h.root, n));
  KDK_TRY_ASSIGN(auto nv, optObjectOrNull(host, "nvidia"));
  if (nv) KDK_TRY_STATUS(parseNvidia(*nv, h, n));
  KDK_TRY_ASSIGN(auto amd, optObjectOrNull(host, "amd"));
  if (amd) KDK_TRY_STATUS(parseAmd(*amd, h, n));
  KDK_TRY_ASSIGN(auto tegra, optObjectOrNull(host, "tegra"));
  if (tegra) {
    TegraStack t;
    KDK_TRY_STATUS(tegra->getOpt("release", t.release, n));
    KDK_TRY_STATUS(tegra->getOpt("nvgpu", t.nvgpu, n));
    KDK_TRY_STATUS(tegra->getOpt("csv_files", t.csvs, n));
    h.tegra = std::move(t);
  }
  KDK_TRY_STATUS(host.getOpt("problems", h.problems, n));
  return h;
}

Result<HostRecord> parseHostRecordJson(const json& j) {
  if (!j.is_object() || !j.contains("schema") || j["schema"] != HostRecord::kSchema) return Error::Invalid(kNotARecord);
  HostRecord rec;
  if (Status st = parseRecord(JsonReader(j), rec); !st.ok())
    return Error::Invalid(std::string(kNotARecord) + ": " + st.error().message);
  rec.doc = j;
  return rec;
}

Result<HostRecord> parseHostRecord(std::string_view text) {
  return parseHostRecordJson(util::parseUntrustedJson(text));
}

json HostRecord::toJson() const {
  json findings = json::array();
  for (const auto& v : verdicts) {
    json jv = {{"code", v.code}, {"severity", v.severity}, {"message", v.message}};
    for (const auto& [k, val] : v.evidence) jv[k] = val;
    findings.push_back(jv);
  }
  return {{"schema", kSchema},
          {"kernodeck_version", kernodeckVersion},
          {"time", time},
          {"container", {{"id", container.id}, {"bundle", container.bundle}, {"pid", container.pid}}},
          {"host", host.toJson()},
          {"gpu_container", gpuContainer},
          {"vendor", vendor},
          {"requested_gpus", requestedGpus},
          {"passed_nodes", passedNodes},
          {"expectation", expectation ? expectation->toJson() : json(nullptr)},
          {"forward_compat", forwardCompat},
          {"verdicts", findings},
          {"policy", policy},
          {"runs", runs},
          {"log_error", logError.empty() ? json(nullptr) : json(logError)},
          {"decision", decision}};
}

}  // namespace kernodeck::host
