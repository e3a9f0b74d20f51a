// See hook_config.h.
#include "kernodeck/hook/hook_config.h"

#include <cctype>

#include "kernodeck/hook/command_line.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using nlohmann::ordered_json;

Result<HookEntry> makeHookEntry(const std::string& binary, const std::vector<std::string>& hookFlags) {
  if (binary.empty() || binary.front() != '/')
    return Error::Invalid("--binary must be an absolute path, not '" + util::printable(binary, 80) + "'");
  std::vector<std::string> flags = hookFlags;
  CommandLine cl = parseCommandLine(flags);
  if (!cl.usageError.empty()) return Error::Invalid("hook flags: " + cl.usageError);
  if (!cl.positional.empty())
    return Error::Invalid("hook flags: unexpected argument '" + util::printable(cl.positional[0], 60) + "'");
  if (cl.help || cl.version) return Error::Invalid("hook flags: --help and --version are not hook flags");
  if (cl.options.logFile.empty()) {
    flags.push_back("--log");
    flags.push_back("/var/log/kernodeck/hook.log");
  }
  bool hasPolicy = false;
  for (const auto& f : flags) hasPolicy = hasPolicy || f == "--policy" || f.starts_with("--policy=");
  HookEntry e;
  e.path = binary;
  e.args = {kHookMarker};
  if (!hasPolicy) e.args.insert(e.args.end(), {"--policy", "warn"});  // say it, so the installed line reads plainly
  e.args.insert(e.args.end(), flags.begin(), flags.end());
  e.args.push_back("createRuntime");
  return e;
}

bool isKernodeckHook(const ordered_json& hook) {
  if (!hook.is_object() || !hook.contains("path") || !hook["path"].is_string()) return false;
  // The marker: every entry we write has argv[0] "kernodeck-hook", whatever --binary says (a
  // mistyped path such as /usr/local/bin/kernodeck-hookk is still ours, and is replaced).
  if (hook.contains("args") && hook["args"].is_array() && !hook["args"].empty() && hook["args"][0] == kHookMarker)
    return true;
  std::string p = hook["path"].get<std::string>();
  return p == "kernodeck-hook" || p.ends_with("/kernodeck-hook");
}

// The environment every hook definition we write gives the hook, explicitly: a fixed PATH and
// nothing else, so the hook inherits nothing from the runtime's or the container's environment
// (no LD_PRELOAD, LD_LIBRARY_PATH or KERNODECK_* an image could set; NVIDIA's 2024-2025 toolkit
// advisories). The hook is static and reads no variable of its own environment to decide.
static ordered_json hookEnv() { return ordered_json::array({"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}); }

ordered_json hooksDFile(const HookEntry& e) {
  return {{"version", "1.0.0"},
          {"hook", {{"path", e.path}, {"args", e.args}, {"env", hookEnv()}, {"timeout", e.timeoutSeconds}}},
          {"when", {{"always", true}}},
          {"stages", {"createRuntime"}}};
}

namespace {

ordered_json cdiHook(const HookEntry& e) {
  return {{"hookName", "createRuntime"},
          {"path", e.path},
          {"args", e.args},
          {"env", hookEnv()},
          {"timeout", e.timeoutSeconds}};
}

// CDI's kind: VENDOR/CLASS, vendor a domain-like name, class alphanumerics, '-' and '_'.
bool validKind(const std::string& kind) {
  size_t slash = kind.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == kind.size()) return false;
  std::string vendor = kind.substr(0, slash), cls = kind.substr(slash + 1);
  if (!std::isalpha(static_cast<unsigned char>(vendor[0])) || !std::isalnum(static_cast<unsigned char>(vendor.back())))
    return false;
  for (char c : vendor)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  if (!std::isalpha(static_cast<unsigned char>(cls[0]))) return false;
  for (char c : cls)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

Status validateEdits(const ordered_json& edits, const std::string& where) {
  if (!edits.is_object()) return Error::Invalid(where + " is not an object");
  if (edits.contains("hooks")) {
    if (!edits["hooks"].is_array()) return Error::Invalid(where + ".hooks is not an array");
    for (size_t i = 0; i < edits["hooks"].size(); ++i) {
      const auto& h = edits["hooks"][i];
      std::string at = where + ".hooks[" + std::to_string(i) + "]";
      if (!h.is_object() || !h.contains("hookName") || !h["hookName"].is_string() || !h.contains("path") ||
          !h["path"].is_string())
        return Error::Invalid(at + " needs a hookName and a path");
    }
  }
  return {};
}

}  // namespace

ordered_json cdiSpec(const HookEntry& e, const std::string& kind, const std::string& device) {
  return {{"cdiVersion", kCdiVersion},
          {"kind", kind},
          {"devices", {{{"name", device}, {"containerEdits", {{"hooks", {cdiHook(e)}}}}}}}};
}

Status validateCdiSpec(const ordered_json& spec) {
  if (!spec.is_object()) return Error::Invalid("a CDI spec is an object (a JSON object, a YAML mapping)");
  if (!spec.contains("cdiVersion") || !spec["cdiVersion"].is_string())
    return Error::Invalid("cdiVersion is missing or not a string");
  auto v = util::split(spec["cdiVersion"].get<std::string>(), '.');
  if (v.size() != 3 || !util::parseUint(v[0]) || !util::parseUint(v[1]) || !util::parseUint(v[2]))
    return Error::Invalid("cdiVersion '" + util::printable(spec["cdiVersion"].get<std::string>(), 20) +
                          "' is not MAJOR.MINOR.PATCH");
  if (!spec.contains("kind") || !spec["kind"].is_string() || !validKind(spec["kind"].get<std::string>()))
    return Error::Invalid("kind is missing or not VENDOR/CLASS");
  if (!spec.contains("devices") || !spec["devices"].is_array() || spec["devices"].empty())
    return Error::Invalid("devices is missing, not an array or empty");
  for (size_t i = 0; i < spec["devices"].size(); ++i) {
    const auto& d = spec["devices"][i];
    std::string at = "devices[" + std::to_string(i) + "]";
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string() || d["name"].get<std::string>().empty())
      return Error::Invalid(at + " has no name");
    if (!d.contains("containerEdits")) return Error::Invalid(at + " has no containerEdits");
    KDK_TRY_STATUS(validateEdits(d["containerEdits"], at + ".containerEdits"));
  }
  if (spec.contains("containerEdits")) KDK_TRY_STATUS(validateEdits(spec["containerEdits"], "containerEdits"));
  return {};
}

namespace {

// `hooks` with `ours` in place of the first kernodeck-hook entry (the others dropped), or
// appended when there is none: a re-run keeps the order an administrator chose.
ordered_json withOurHook(const ordered_json& hooks, const ordered_json& ours) {
  ordered_json out = ordered_json::array();
  bool placed = false;
  for (const auto& h : hooks)
    if (!isKernodeckHook(h))
      out.push_back(h);
    else if (!placed) {
      out.push_back(ours);
      placed = true;
    }
  if (!placed) out.push_back(ours);
  return out;
}

}  // namespace

Result<ordered_json> addHookToCdiSpec(ordered_json spec, const HookEntry& e) {
  KDK_TRY_STATUS(validateCdiSpec(spec));
  if (!spec.contains("containerEdits")) spec["containerEdits"] = ordered_json::object();
  ordered_json& edits = spec["containerEdits"];
  edits["hooks"] = withOurHook(edits.value("hooks", ordered_json::array()), cdiHook(e));
  KDK_TRY_STATUS(validateCdiSpec(spec));
  return spec;
}

Result<ordered_json> addHookToRuntimeConfig(ordered_json config, const HookEntry& e) {
  if (!config.is_object()) return Error::Invalid("a runtime config.json is a JSON object");
  if (!config.contains("ociVersion") || !config["ociVersion"].is_string())
    return Error::Invalid("ociVersion is missing: not an OCI runtime config");
  if (config.contains("hooks") && !config["hooks"].is_object()) return Error::Invalid("hooks is not an object");
  ordered_json& hooks = config["hooks"];
  if (hooks.is_null()) hooks = ordered_json::object();
  if (hooks.contains("createRuntime") && !hooks["createRuntime"].is_array())
    return Error::Invalid("hooks.createRuntime is not an array");
  ordered_json ours = {{"path", e.path}, {"args", e.args}, {"env", hookEnv()}, {"timeout", e.timeoutSeconds}};
  hooks["createRuntime"] = withOurHook(hooks.value("createRuntime", ordered_json::array()), ours);
  return config;
}

namespace {

// `hooks` without kernodeck-hook entries.
ordered_json withoutOurHook(const ordered_json& hooks) {
  ordered_json out = ordered_json::array();
  for (const auto& h : hooks)
    if (!isKernodeckHook(h)) out.push_back(h);
  return out;
}

}  // namespace

Result<ordered_json> removeHookFromCdiSpec(ordered_json spec) {
  KDK_TRY_STATUS(validateCdiSpec(spec));
  if (!spec.contains("containerEdits") || !spec["containerEdits"].contains("hooks")) return spec;
  ordered_json& edits = spec["containerEdits"];
  edits["hooks"] = withoutOurHook(edits["hooks"]);
  if (edits["hooks"].empty()) edits.erase("hooks");
  if (edits.empty()) spec.erase("containerEdits");
  KDK_TRY_STATUS(validateCdiSpec(spec));
  return spec;
}

Result<ordered_json> removeHookFromRuntimeConfig(ordered_json config) {
  if (!config.is_object()) return Error::Invalid("a runtime config.json is a JSON object");
  if (!config.contains("ociVersion") || !config["ociVersion"].is_string())
    return Error::Invalid("ociVersion is missing: not an OCI runtime config");
  if (!config.contains("hooks")) return config;
  if (!config["hooks"].is_object()) return Error::Invalid("hooks is not an object");
  ordered_json& hooks = config["hooks"];
  if (!hooks.contains("createRuntime")) return config;
  if (!hooks["createRuntime"].is_array()) return Error::Invalid("hooks.createRuntime is not an array");
  hooks["createRuntime"] = withoutOurHook(hooks["createRuntime"]);
  if (hooks["createRuntime"].empty()) hooks.erase("createRuntime");
  if (hooks.empty()) config.erase("hooks");
  return config;
}

}  // namespace kernodeck::hook
