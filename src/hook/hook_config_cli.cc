// kernodeck-hook's installation commands: they print or edit the files runtimes read hooks
// from (hook_config.h). Edits are atomic (temporary file, rename), idempotent (no write
// when the hook is already in place) and keep a backup of what they replaced. A CDI spec is
// YAML or JSON by its extension, as the CDI runtimes read it (yaml_document.h), and is written
// back in the format it came in.
#include <cstdio>
#include <iostream>
#include <optional>

#include "kernodeck/hook/command_line.h"
#include "kernodeck/hook/hook_config.h"
#include "kernodeck/hook/yaml_document.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using nlohmann::ordered_json;

namespace {

const char* kUsage =
    "usage: kernodeck-hook cdi spec [--output FILE] [--format json|yaml] [--kind VENDOR/CLASS] [--device NAME] "
    "[--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook cdi inject SPEC.yaml|SPEC.json [--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook runc-config CONFIG.json [--binary PATH] [HOOK FLAGS]\n"
    "       kernodeck-hook hooks-d [--output FILE] [--binary PATH] [HOOK FLAGS]\n"
    "HOOK FLAGS are kernodeck-hook's own (--policy, --host-root, --log, --timeout-ms), checked before\n"
    "anything is written. --binary defaults to /usr/local/bin/kernodeck-hook. A spec is YAML when its\n"
    "name ends in .yaml or .yml (cdi spec: or with --format yaml), JSON otherwise.\n";

struct ConfigArgs {
  std::vector<std::string> positional, hookFlags;
  std::string output, format, kind = "kernodeck.io/hook", device = "check", binary = "/usr/local/bin/kernodeck-hook";
  std::string error;
};

ConfigArgs parse(const std::vector<std::string>& args) {
  ConfigArgs c;
  for (size_t i = 0; i < args.size() && c.error.empty(); ++i) {
    const std::string& a = args[i];
    auto [name, value, inlineValue] = splitFlag(a);
    std::string* own = name == "--output"   ? &c.output
                       : name == "--format" ? &c.format
                       : name == "--kind"   ? &c.kind
                       : name == "--device" ? &c.device
                       : name == "--binary" ? &c.binary
                                            : nullptr;
    bool hookValued = takesValue(name);
    if (!own && !hookValued) {
      if (a.starts_with("-"))
        c.hookFlags.push_back(a);  // the hook's parser names it
      else
        c.positional.push_back(a);
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size()) {
        c.error = name + " needs a value";
        break;
      }
      value = args[++i];
    }
    if (own)
      *own = value;
    else
      c.hookFlags.insert(c.hookFlags.end(), {name, value});
  }
  return c;
}

int fail(int code, const std::string& msg) {
  std::fprintf(stderr, "kernodeck-hook: %s\n", msg.c_str());
  return code;
}

// The format a spec file is read and written in: YAML for .yaml / .yml, as CDI runtimes decide.
bool isYamlPath(const std::string& file) { return file.ends_with(".yaml") || file.ends_with(".yml"); }

// The text of `doc`. YAML is read back before it is used: NVIDIA's spec is what every GPU
// container of the node starts from, so a spec that would not read back as the one validated is
// never written (Error::Corrupt: exit 3, could not complete).
Result<std::string> render(const ordered_json& doc, bool yaml) {
  if (!yaml) return doc.dump(2) + "\n";
  KDK_TRY_ASSIGN(std::string text, emitYaml(doc));
  auto back = parseYaml(text);
  if (!back.ok() || back->dump() != doc.dump())
    return Error::Corrupt("the YAML written would not read back as the spec; nothing written");
  return text;
}

int emit(const ordered_json& doc, const std::string& output, bool yaml) {
  auto text = render(doc, yaml);
  if (!text.ok()) return fail(text.error().code == "corrupt" ? 3 : 2, text.error().message);
  if (output.empty() || output == "-") {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  if (auto w = util::writeFileAtomic(output, *text); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: wrote %s\n", output.c_str());
  return 0;
}

// Reads FILE (YAML or JSON by its name), applies `edit`, and writes it back in the same format
// (keeping FILE.kernodeck-backup) unless nothing changed.
template <class Edit>
int editFile(const std::string& file, const char* what, bool mayBeYaml, Edit edit) {
  auto text = util::readFileLimited(file, 16u << 20);
  if (!text.ok()) return fail(3, text.error().message);
  bool yaml = mayBeYaml && isYamlPath(file);
  ordered_json doc;
  if (yaml) {
    auto parsed = parseYaml(*text);
    if (!parsed.ok()) return fail(2, file + " is not usable YAML: " + parsed.error().message);
    doc = std::move(*parsed);
  } else {
    doc = ordered_json::parse(*text, nullptr, false);
    if (doc.is_discarded())
      return fail(2, file + " is not JSON" + (mayBeYaml ? " (a YAML spec must be named .yaml or .yml)" : ""));
  }
  Result<ordered_json> edited = edit(doc);
  if (!edited.ok()) return fail(2, file + " is not " + what + ": " + edited.error().message);
  if (*edited == doc) {
    std::fprintf(stderr, "kernodeck-hook: %s already runs this hook; unchanged\n", file.c_str());
    return 0;
  }
  auto out = render(*edited, yaml);
  if (!out.ok()) return fail(out.error().code == "corrupt" ? 3 : 2, file + ": " + out.error().message);
  if (yaml && text->starts_with("---\n")) *out = "---\n" + *out;  // as the toolkit writes it
  std::string backup = file + ".kernodeck-backup";
  if (auto b = util::writeFileAtomic(backup, *text); !b.ok()) return fail(3, b.error().message);
  if (auto w = util::writeFileAtomic(file, *out); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: added the hook to %s (previous version in %s)\n", file.c_str(), backup.c_str());
  return 0;
}

}  // namespace

int configCommand(const std::vector<std::string>& args) {
  ConfigArgs c = parse(args);
  if (!c.error.empty()) return fail(2, c.error + "\n" + kUsage);
  auto pos = [&](size_t i) { return i < c.positional.size() ? c.positional[i] : std::string(); };
  std::string cmd = pos(0) == "cdi" ? "cdi " + pos(1) : pos(0);
  size_t wantPositional =
      cmd == "cdi inject" || cmd == "runc-config" ? (cmd == "runc-config" ? 2 : 3) : (cmd == "cdi spec" ? 2 : 1);
  if (cmd != "cdi spec" && cmd != "cdi inject" && cmd != "runc-config" && cmd != "hooks-d")
    return fail(2, "unknown command '" + util::printable(cmd, 40) + "'\n" + kUsage);
  auto entry = makeHookEntry(c.binary, c.hookFlags);  // first: a misspelt flag leaves its value as an argument
  if (!entry.ok()) return fail(2, entry.error().message);
  if (c.positional.size() != wantPositional) return fail(2, "wrong number of arguments for " + cmd + "\n" + kUsage);
  if (!c.format.empty() && cmd != "cdi spec") return fail(2, "--format is a flag of cdi spec only");
  if (!c.format.empty() && c.format != "json" && c.format != "yaml")
    return fail(2, "--format takes json or yaml, not '" + util::printable(c.format, 40) + "'");
  if (cmd == "hooks-d") return emit(hooksDFile(*entry), c.output, false);
  if (cmd == "cdi spec") {
    ordered_json spec = cdiSpec(*entry, c.kind, c.device);
    if (auto v = validateCdiSpec(spec); !v.ok()) return fail(2, v.error().message);
    bool yaml = c.format.empty() ? isYamlPath(c.output) : c.format == "yaml";
    if (!c.format.empty() && !c.output.empty() && c.output != "-" && yaml != isYamlPath(c.output))
      return fail(2, "--format " + c.format + " does not match the name " + util::printable(c.output, 80) +
                         ": CDI runtimes read a spec by its extension (.json, .yaml)");
    return emit(spec, c.output, yaml);
  }
  if (cmd == "cdi inject")
    return editFile(pos(2), "a CDI spec", true, [&](const ordered_json& d) { return addHookToCdiSpec(d, *entry); });
  return editFile(pos(1), "an OCI runtime config", false,
                  [&](const ordered_json& d) { return addHookToRuntimeConfig(d, *entry); });
}

}  // namespace kernodeck::hook
