// kernodeck-hook's installation commands: they print or edit the files runtimes read hooks
// from (hook_config.h). Edits are atomic (temporary file, rename), idempotent (no write
// when the hook is already in place) and keep a backup of what they replaced.
#include <cstdio>
#include <iostream>
#include <optional>

#include "kernodeck/hook/command_line.h"
#include "kernodeck/hook/hook_config.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using nlohmann::ordered_json;

namespace {

const char* kUsage =
    "usage: kernodeck-hook cdi spec [--output FILE] [--kind VENDOR/CLASS] [--device NAME] [--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook cdi inject SPEC.json [--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook runc-config CONFIG.json [--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook hooks-d [--output FILE] [--binary PATH] [HOOK FLAGS]\n"
    "HOOK FLAGS are kernodeck-hook's own (--policy, --host-root, --log, --timeout-ms), checked before\n"
    "anything is written. --binary defaults to /usr/local/bin/kernodeck-hook.\n";

struct ConfigArgs {
  std::vector<std::string> positional, hookFlags;
  std::string output, kind = "kernodeck.io/hook", device = "check", binary = "/usr/local/bin/kernodeck-hook";
  std::string error;
};

ConfigArgs parse(const std::vector<std::string>& args) {
  ConfigArgs c;
  for (size_t i = 0; i < args.size() && c.error.empty(); ++i) {
    const std::string& a = args[i];
    auto [name, value, inlineValue] = splitFlag(a);
    std::string* own = name == "--output" ? &c.output : name == "--kind" ? &c.kind : name == "--device" ? &c.device
                     : name == "--binary" ? &c.binary : nullptr;
    bool hookValued = name == "--policy" || name == "--host-root" || name == "--log" || name == "--timeout-ms";
    if (!own && !hookValued) {
      if (a.starts_with("-")) c.hookFlags.push_back(a);  // the hook's parser names it
      else c.positional.push_back(a);
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size()) {
        c.error = name + " needs a value";
        break;
      }
      value = args[++i];
    }
    if (own) *own = value;
    else c.hookFlags.insert(c.hookFlags.end(), {name, value});
  }
  return c;
}

int fail(int code, const std::string& msg) {
  std::fprintf(stderr, "kernodeck-hook: %s\n", msg.c_str());
  return code;
}

int emit(const ordered_json& doc, const std::string& output) {
  std::string text = doc.dump(2) + "\n";
  if (output.empty() || output == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (auto w = util::writeFileAtomic(output, text); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: wrote %s\n", output.c_str());
  return 0;
}

// Reads FILE as JSON, applies `edit`, and writes it back (keeping FILE.kernodeck-backup) unless
// nothing changed.
template <class Edit>
int editFile(const std::string& file, const char* what, Edit edit) {
  auto text = util::readFileLimited(file, 16u << 20);
  if (!text.ok()) return fail(3, text.error().message);
  ordered_json doc = ordered_json::parse(*text, nullptr, false);
  if (doc.is_discarded())
    return fail(2, file + " is not JSON" +
                       (file.ends_with(".yaml") || file.ends_with(".yml")
                            ? " (a YAML CDI spec: have it generated as JSON, nvidia-ctk cdi generate --format=json --output=/etc/cdi/nvidia.json)"
                            : ""));
  Result<ordered_json> edited = edit(doc);
  if (!edited.ok()) return fail(2, file + " is not " + what + ": " + edited.error().message);
  if (*edited == doc) {
    std::fprintf(stderr, "kernodeck-hook: %s already runs this hook; unchanged\n", file.c_str());
    return 0;
  }
  std::string backup = file + ".kernodeck-backup";
  if (auto b = util::writeFileAtomic(backup, *text); !b.ok()) return fail(3, b.error().message);
  if (auto w = util::writeFileAtomic(file, edited->dump(2) + "\n"); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: added the hook to %s (previous version in %s)\n", file.c_str(), backup.c_str());
  return 0;
}

}  // namespace

int configCommand(const std::vector<std::string>& args) {
  ConfigArgs c = parse(args);
  if (!c.error.empty()) return fail(2, c.error + "\n" + kUsage);
  auto pos = [&](size_t i) { return i < c.positional.size() ? c.positional[i] : std::string(); };
  std::string cmd = pos(0) == "cdi" ? "cdi " + pos(1) : pos(0);
  size_t wantPositional = cmd == "cdi inject" || cmd == "runc-config" ? (cmd == "runc-config" ? 2 : 3) : (cmd == "cdi spec" ? 2 : 1);
  if (cmd != "cdi spec" && cmd != "cdi inject" && cmd != "runc-config" && cmd != "hooks-d")
    return fail(2, "unknown command '" + util::printable(cmd, 40) + "'\n" + kUsage);
  if (c.positional.size() != wantPositional) return fail(2, "wrong number of arguments for " + cmd + "\n" + kUsage);
  auto entry = makeHookEntry(c.binary, c.hookFlags);
  if (!entry.ok()) return fail(2, entry.error().message);
  if (cmd == "hooks-d") return emit(hooksDFile(*entry), c.output);
  if (cmd == "cdi spec") {
    ordered_json spec = cdiSpec(*entry, c.kind, c.device);
    if (auto v = validateCdiSpec(spec); !v.ok()) return fail(2, v.error().message);
    return emit(spec, c.output);
  }
  if (cmd == "cdi inject")
    return editFile(pos(2), "a CDI spec", [&](const ordered_json& d) { return addHookToCdiSpec(d, *entry); });
  return editFile(pos(1), "an OCI runtime config", [&](const ordered_json& d) { return addHookToRuntimeConfig(d, *entry); });
}

}  // namespace kernodeck::hook
