// kernodeck-hook's installation commands: they print or edit the files runtimes read hooks
// from (hook_config.h). Edits are atomic (temporary file, rename), idempotent (no write
// when the hook is already in place), keep the file's mode and owner, and keep the version they
// replaced and, once, the original without our hook. A CDI spec is YAML or JSON by its
// extension, as the CDI runtimes read it (yaml_document.h), and is written back in the format it
// came in. A command that writes a file first checks what the hook line names (the binary, the
// host root, the log's directory), so that no install leaves a line that fails at every start.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "kernodeck/hook/command_line.h"
#include "kernodeck/hook/hook_config.h"
#include "kernodeck/hook/yaml_document.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using nlohmann::ordered_json;

namespace {

const char* kUsage =
    "usage: kernodeck-hook cdi spec [--output FILE] [--format json|yaml] [--kind VENDOR/CLASS] [--device NAME] "
    "[--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "       kernodeck-hook cdi inject SPEC.yaml|SPEC.json [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "       kernodeck-hook runc-config CONFIG.json [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "       kernodeck-hook hooks-d [--output FILE] [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "HOOK FLAGS are kernodeck-hook's own (--policy, --host-root, --log, --timeout-ms), checked before\n"
    "anything is written. --binary defaults to /usr/local/bin/kernodeck-hook. A spec is YAML when its\n"
    "name ends in .yaml or .yml (cdi spec: or with --format yaml), JSON otherwise. A command that writes\n"
    "a file checks that --binary is an executable that answers --version as kernodeck-hook, that\n"
    "--host-root is a directory and that --log's directory (or its parent) exists, under --dest-root\n"
    "when the node's root is mounted there.\n";

struct ConfigArgs {
  std::vector<std::string> positional, hookFlags;
  std::string output, format, kind = "kernodeck.io/hook", device = "check", binary = "/usr/local/bin/kernodeck-hook";
  std::string destRoot;
  std::vector<std::string> given;  // the command's own flags that were given
  std::string error;
};

ConfigArgs parse(const std::vector<std::string>& args) {
  ConfigArgs c;
  for (size_t i = 0; i < args.size() && c.error.empty(); ++i) {
    const std::string& a = args[i];
    auto [name, value, inlineValue] = splitFlag(a);
    std::string* own = name == "--output"      ? &c.output
                       : name == "--format"    ? &c.format
                       : name == "--kind"      ? &c.kind
                       : name == "--device"    ? &c.device
                       : name == "--binary"    ? &c.binary
                       : name == "--dest-root" ? &c.destRoot
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
    if (own) {
      *own = value;
      c.given.push_back(name);
    } else
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
// never written (Error::Failed: exit 3, could not complete).
Result<std::string> render(const ordered_json& doc, bool yaml) {
  if (!yaml) return doc.dump(2) + "\n";
  KDK_TRY_ASSIGN(std::string text, emitYaml(doc));
  auto back = parseYaml(text);
  if (!back.ok() || back->dump() != doc.dump())
    return Error::Failed("the YAML written would not read back as the spec; nothing written");
  return text;
}

int emit(const ordered_json& doc, const std::string& output, bool yaml) {
  auto text = render(doc, yaml);
  if (!text.ok()) return fail(report::exitCodeOf(text.error()), text.error().message);
  if (output.empty() || output == "-") {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  if (auto w = util::writeFileAtomic(output, *text); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: wrote %s\n", output.c_str());
  return 0;
}

// Whether any hook list of `doc` holds a kernodeck-hook entry (a spec we edited before).
bool hasOurHook(const ordered_json& doc) {
  if (doc.is_object() && isKernodeckHook(doc)) return true;
  if (doc.is_object() || doc.is_array())
    for (const auto& v : doc)
      if (hasOurHook(v)) return true;
  return false;
}

// The directory part of PATH ("." when none).
std::string dirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::optional<std::string> realPath(const std::string& path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

// The file an edit of FILE writes: FILE itself, or, when FILE is a symlink (as configuration
// managers leave /etc/cdi/nvidia.yaml), the file it points to, which must lie in the link's own
// directory or a CDI spec directory (/etc/cdi, /var/run/cdi, /run/cdi). A copy in place of the
// link would be frozen: the toolkit regenerates the target and the runtimes would never see it.
Result<std::string> editTarget(const std::string& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return file;
  auto target = realPath(file);
  if (!target) return Error::Invalid(file + " is a symlink that does not resolve to a file");
  std::vector<std::string> dirs;
  for (const std::string& d :
       {dirOf(file), std::string("/etc/cdi"), std::string("/var/run/cdi"), std::string("/run/cdi")})
    if (auto r = realPath(d)) dirs.push_back(*r == "/" ? "" : *r);
  for (const auto& d : dirs)
    if (target->starts_with(d + "/")) return *target;
  return Error::Invalid(file + " is a symlink to " + *target +
                        ", outside the spec directories (the link's own, /etc/cdi, /var/run/cdi): edit that file, or "
                        "replace the link with it");
}

// Writes CONTENT to PATH atomically with the mode and owner of `like` (the file it replaces).
Status writeLike(const std::string& path, std::string_view content, const struct stat& like) {
  std::string tmp = path + ".kernodeck-tmp-XXXXXX";  // no .json / .yaml ending: no runtime loads it
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Error::Io("cannot create a file beside " + path + ": " + std::strerror(errno));
  bool ok = true;
  for (size_t done = 0; ok && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) ok = false;
    done += n > 0 ? static_cast<size_t>(n) : 0;
  }
  std::string why = ok ? "" : "write";
  if (ok && ::fchmod(fd, like.st_mode & 07777) != 0) why = "keep the mode of";
  if (why.empty() && ::fchown(fd, like.st_uid, like.st_gid) != 0) why = "keep the owner of";
  if (why.empty() && ::fsync(fd) != 0) why = "sync";
  int err = errno;
  ::close(fd);
  if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    why = "replace";
    err = errno;
  }
  if (why.empty()) return {};
  ::unlink(tmp.c_str());
  return Error::Io("cannot " + why + " " + path + ": " + std::strerror(err));
}

// Reads FILE (YAML or JSON by its name), applies `edit`, and writes it back in the same format
// unless nothing changed: the file a symlink points to (editTarget), with its mode and owner;
// the version replaced in FILE.kernodeck-backup and, once, the original without our hook in
// FILE.orig (both with the same mode and owner).
template <class Edit>
int editFile(const std::string& named, const char* what, bool mayBeYaml, Edit edit) {
  auto target = editTarget(named);
  if (!target.ok()) return fail(2, target.error().message);
  const std::string& file = *target;
  auto text = util::readFileLimited(file, 16u << 20);
  if (!text.ok()) return fail(3, text.error().message);
  struct stat like {};
  if (::stat(file.c_str(), &like) != 0) return fail(3, file + ": " + std::strerror(errno));
  bool yaml = mayBeYaml && isYamlPath(named);  // as the runtimes read it: by the name they list
  ordered_json doc;
  if (yaml) {
    auto parsed = parseYaml(*text);
    if (!parsed.ok()) return fail(2, named + " is not usable YAML: " + parsed.error().message);
    doc = std::move(*parsed);
  } else {
    if (auto deep = util::checkJsonNesting(*text, named); !deep.ok()) return fail(2, deep.error().message);
    doc = ordered_json::parse(*text, nullptr, false);
    if (doc.is_discarded())
      return fail(2, named + " is not JSON" + (mayBeYaml ? " (a YAML spec must be named .yaml or .yml)" : ""));
  }
  Result<ordered_json> edited = edit(doc);
  if (!edited.ok()) return fail(2, named + " is not " + what + ": " + edited.error().message);
  if (*edited == doc) {
    std::fprintf(stderr, "kernodeck-hook: %s already runs this hook; unchanged\n", file.c_str());
    return 0;
  }
  auto out = render(*edited, yaml);
  if (!out.ok()) return fail(report::exitCodeOf(out.error()), named + ": " + out.error().message);
  if (yaml && text->starts_with("---\n")) *out = "---\n" + *out;  // as the toolkit writes it
  std::string orig = file + ".orig", backup = file + ".kernodeck-backup";
  struct stat ignored {};
  if (!hasOurHook(doc) && ::lstat(orig.c_str(), &ignored) != 0)
    if (auto o = writeLike(orig, *text, like); !o.ok()) return fail(3, o.error().message);
  if (auto b = writeLike(backup, *text, like); !b.ok()) return fail(3, b.error().message);
  if (auto w = writeLike(file, *out, like); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: added the hook to %s (previous version in %s)\n", file.c_str(), backup.c_str());
  return 0;
}

// What a hook line names, checked before a command writes it, under DEST (the node's root as
// mounted here; "" for /): --binary an executable that answers --version as kernodeck-hook,
// --host-root a directory, and --log's directory or its parent (the hook creates the last
// level, mode 0750). A line that names a missing binary fails every container start, even
// under warn; a log in a missing tree is dropped, and with it the only place crun's refusals
// are explained.
Status checkLine(const std::string& dest, const std::string& binary, const std::vector<std::string>& hookFlags) {
  std::string bin = dest + binary;
  struct stat st {};
  if (::stat(bin.c_str(), &st) != 0) return Error::Invalid("--binary " + binary + " does not exist (at " + bin + ")");
  if (!S_ISREG(st.st_mode) || ::access(bin.c_str(), X_OK) != 0)
    return Error::Invalid("--binary " + binary + " is not an executable file");
  util::ProcessSpec ps;
  ps.argv = {bin, "--version"};
  ps.timeoutMs = 10000;
  ps.maxOutput = 4096;
  auto r = util::runProcess(ps);
  if (!r.ok() || !r->ok() || !r->out.starts_with("kernodeck-hook "))
    return Error::Invalid("--binary " + binary + " does not answer --version as kernodeck-hook does (" +
                          (!r.ok()    ? r.error().message
                           : !r->ok() ? r->describe()
                                      : "it printed something else") +
                          ")");
  CommandLine cl = parseCommandLine(hookFlags);
  std::string root = dest + cl.options.hostRoot;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error::Invalid("--host-root " + cl.options.hostRoot + " is not a directory (at " + root + ")");
  std::string log =
      dest + (cl.options.logFile.empty() ? std::string("/var/log/kernodeck/hook.log") : cl.options.logFile);
  std::string dir = dirOf(log);
  if (::stat(dir.c_str(), &st) != 0 && ::stat(dirOf(dir).c_str(), &st) != 0)
    return Error::Invalid("--log " + log.substr(dest.size()) +
                          ": neither its directory nor that directory's parent exists (" + dirOf(dir) +
                          "); create it, or the hook's log (the reasons of its refusals) is lost");
  return {};
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
  auto given = [&](const char* flag) { return std::find(c.given.begin(), c.given.end(), flag) != c.given.end(); };
  if (!c.format.empty() && cmd != "cdi spec") return fail(2, "--format is a flag of cdi spec only");
  for (const char* flag : {"--kind", "--device"})
    if (given(flag) && cmd != "cdi spec") return fail(2, std::string(flag) + " is a flag of cdi spec only");
  if (given("--output") && cmd != "cdi spec" && cmd != "hooks-d")
    return fail(2, "--output is a flag of cdi spec and hooks-d only: " + cmd + " edits the file it names");
  bool writes = cmd == "cdi inject" || cmd == "runc-config" || (!c.output.empty() && c.output != "-");
  if (!c.destRoot.empty() && !writes) return fail(2, "--dest-root is for commands that write a file");
  std::string dest = c.destRoot == "/"           ? ""
                     : c.destRoot.ends_with("/") ? c.destRoot.substr(0, c.destRoot.size() - 1)
                                                 : c.destRoot;
  if (writes)
    if (auto ok = checkLine(dest, c.binary, c.hookFlags); !ok.ok()) return fail(2, ok.error().message);
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
