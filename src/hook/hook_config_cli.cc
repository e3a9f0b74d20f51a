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
    "       kernodeck-hook cdi remove SPEC.yaml|SPEC.json\n"
    "       kernodeck-hook runc-config CONFIG.json [--remove] [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "       kernodeck-hook hooks-d [--output FILE] [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
    "       kernodeck-hook install|uninstall [OPTIONS]   (the node installer; see kernodeck-hook install --help)\n"
    "HOOK FLAGS are kernodeck-hook's own (--policy, --host-root, --log, --timeout-ms), checked before\n"
    "anything is written. --binary defaults to /usr/local/bin/kernodeck-hook. A spec is YAML when its\n"
    "name ends in .yaml or .yml (cdi spec: or with --format yaml), JSON otherwise. A command that writes\n"
    "a file checks that --binary is an executable that answers --version as kernodeck-hook, that\n"
    "--host-root is a directory and that --log's directory (or its parent) exists, under --dest-root\n"
    "when the node's root is mounted there. `kernodeck-hook COMMAND --help` describes one command.\n";

// `kernodeck-hook COMMAND --help`: what one command does, its flags and an example.
const char* helpOf(const std::string& cmd) {
  if (cmd == "cdi spec")
    return "usage: kernodeck-hook cdi spec [--output FILE] [--format json|yaml] [--kind VENDOR/CLASS] [--device NAME]\n"
           "                               [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
           "Prints (or writes to --output) a CDI spec whose one device runs the hook; a container asks for it\n"
           "with --device KIND=DEVICE (default kernodeck.io/hook=check).\n"
           "  --output FILE        write FILE atomically instead of printing (YAML when it ends in .yaml/.yml)\n"
           "  --format json|yaml   the format when printing (default json)\n"
           "  --kind VENDOR/CLASS  the spec's kind (default kernodeck.io/hook)\n"
           "  --device NAME        the device's name (default check)\n"
           "  --binary PATH        the hook the line runs (default /usr/local/bin/kernodeck-hook)\n"
           "  --dest-root DIR      check what the line names under DIR (the node's root mounted there)\n"
           "example: kernodeck-hook cdi spec --binary /usr/bin/kernodeck-hook --output /etc/cdi/kernodeck.json\n";
  if (cmd == "cdi inject")
    return "usage: kernodeck-hook cdi inject SPEC.yaml|SPEC.json [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
           "Adds the hook to the top-level containerEdits of an existing CDI spec (NVIDIA's /etc/cdi/nvidia.yaml),\n"
           "so that every device of it runs the check. Idempotent; an earlier kernodeck-hook entry is replaced in\n"
           "place; the previous file is kept as SPEC.kernodeck-backup and, once, the original as SPEC.orig.\n"
           "Undone by `kernodeck-hook cdi remove SPEC`.\n"
           "example: kernodeck-hook cdi inject /etc/cdi/nvidia.yaml --binary /usr/bin/kernodeck-hook --policy "
           "enforce\n";
  if (cmd == "cdi remove")
    return "usage: kernodeck-hook cdi remove SPEC.yaml|SPEC.json\n"
           "Removes every kernodeck-hook entry from a CDI spec, keeping every other hook in order: the original\n"
           "bytes of SPEC.orig when the spec is otherwise unchanged since the inject. Deletes SPEC.kernodeck-backup\n"
           "and SPEC.orig. A spec without the hook is left as it is.\n"
           "example: kernodeck-hook cdi remove /etc/cdi/nvidia.yaml\n";
  if (cmd == "runc-config")
    return "usage: kernodeck-hook runc-config CONFIG.json [--remove] [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
           "Adds the hook to hooks.createRuntime of a runc/crun config.json (or a containerd base_runtime_spec),\n"
           "replacing an earlier kernodeck-hook entry; with --remove, takes every kernodeck-hook entry out.\n"
           "example: kernodeck-hook runc-config bundle/config.json --binary /usr/bin/kernodeck-hook --policy enforce\n"
           "         kernodeck-hook runc-config bundle/config.json --remove\n";
  if (cmd == "hooks-d")
    return "usage: kernodeck-hook hooks-d [--output FILE] [--binary PATH] [--dest-root DIR] [HOOK FLAGS]\n"
           "Prints (or writes to --output) the OCI hooks.d file that podman and CRI-O read\n"
           "(/usr/share/containers/oci/hooks.d, /etc/containers/oci/hooks.d).\n"
           "example: kernodeck-hook hooks-d --binary /usr/bin/kernodeck-hook --policy warn\n";
  return nullptr;
}

struct ConfigArgs {
  std::vector<std::string> positional, hookFlags;
  std::string output, format, kind = "kernodeck.io/hook", device = "check", binary = "/usr/local/bin/kernodeck-hook";
  std::string destRoot;
  bool remove = false;             // runc-config --remove
  std::vector<std::string> given;  // the command's own flags that were given
  std::string error;
};

ConfigArgs parse(const std::vector<std::string>& args) {
  ConfigArgs c;
  for (size_t i = 0; i < args.size() && c.error.empty(); ++i) {
    const std::string& a = args[i];
    auto [name, value, inlineValue] = splitFlag(a);
    if (a == "--remove") {
      c.remove = true;
      c.given.push_back(a);
      continue;
    }
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

// A spec or config as read for an edit: the file written (editTarget), its text, mode and owner,
// its format and its document.
struct Loaded {
  std::string file, text;
  struct stat like {};
  bool yaml = false;
  ordered_json doc;
};

// Reads NAMED (YAML or JSON by its name, as the runtimes read it); exit code and message on failure.
Result<Loaded> load(const std::string& named, bool mayBeYaml) {
  Loaded l;
  auto target = editTarget(named);
  if (!target.ok()) return Error::Invalid(target.error().message);
  l.file = *target;
  auto text = util::readFileLimited(l.file, 16u << 20);
  if (!text.ok()) return Error::Io(text.error().message);
  l.text = std::move(*text);
  if (::stat(l.file.c_str(), &l.like) != 0) return Error::Io(l.file + ": " + std::strerror(errno));
  l.yaml = mayBeYaml && isYamlPath(named);  // as the runtimes read it: by the name they list
  if (l.yaml) {
    auto parsed = parseYaml(l.text);
    if (!parsed.ok()) return Error::Invalid(named + " is not usable YAML: " + parsed.error().message);
    l.doc = std::move(*parsed);
  } else {
    if (auto deep = util::checkJsonNesting(l.text, named); !deep.ok()) return Error::Invalid(deep.error().message);
    l.doc = ordered_json::parse(l.text, nullptr, false);
    if (l.doc.is_discarded())
      return Error::Invalid(named + " is not JSON" + (mayBeYaml ? " (a YAML spec must be named .yaml or .yml)" : ""));
  }
  return l;
}

int failWith(const Error& e) { return fail(e.is(ErrorKind::Invalid) ? 2 : 3, e.message); }

// Reads FILE (YAML or JSON by its name), applies `edit`, and writes it back in the same format
// unless nothing changed: the file a symlink points to (editTarget), with its mode and owner;
// the version replaced in FILE.kernodeck-backup and, once, the original without our hook in
// FILE.orig (both with the same mode and owner).
template <class Edit>
int editFile(const std::string& named, const char* what, bool mayBeYaml, Edit edit) {
  auto loaded = load(named, mayBeYaml);
  if (!loaded.ok()) return failWith(loaded.error());
  const std::string& file = loaded->file;
  const std::string& text = loaded->text;
  bool yaml = loaded->yaml;
  const ordered_json& doc = loaded->doc;
  Result<ordered_json> edited = edit(doc);
  if (!edited.ok()) return fail(2, named + " is not " + what + ": " + edited.error().message);
  if (*edited == doc) {
    std::fprintf(stderr, "kernodeck-hook: %s already runs this hook; unchanged\n", file.c_str());
    return 0;
  }
  auto out = render(*edited, yaml);
  if (!out.ok()) return fail(report::exitCodeOf(out.error()), named + ": " + out.error().message);
  if (yaml && text.starts_with("---\n")) *out = "---\n" + *out;  // as the toolkit writes it
  std::string orig = file + ".orig", backup = file + ".kernodeck-backup";
  struct stat ignored {};
  if (!hasOurHook(doc) && ::lstat(orig.c_str(), &ignored) != 0)
    if (auto o = writeLike(orig, text, loaded->like); !o.ok()) return fail(3, o.error().message);
  if (auto b = writeLike(backup, text, loaded->like); !b.ok()) return fail(3, b.error().message);
  if (auto w = writeLike(file, *out, loaded->like); !w.ok()) return fail(3, w.error().message);
  std::fprintf(stderr, "kernodeck-hook: added the hook to %s (previous version in %s)\n", file.c_str(), backup.c_str());
  return 0;
}

// The undoing of editFile: FILE without our hook, written back as FILE.orig's own bytes when it
// reads as the same document (the original restored exactly), otherwise rendered in FILE's
// format; then FILE.kernodeck-backup and FILE.orig deleted. A file without our hook is not
// written, and its stale backup and original of ours are deleted.
template <class Edit>
int unEditFile(const std::string& named, const char* what, bool mayBeYaml, Edit edit) {
  auto loaded = load(named, mayBeYaml);
  if (!loaded.ok()) return failWith(loaded.error());
  const std::string& file = loaded->file;
  Result<ordered_json> edited = edit(loaded->doc);
  if (!edited.ok()) return fail(2, named + " is not " + what + ": " + edited.error().message);
  std::string orig = file + ".orig", backup = file + ".kernodeck-backup";
  if (*edited == loaded->doc) {
    std::fprintf(stderr, "kernodeck-hook: %s has no kernodeck-hook entry; unchanged\n", file.c_str());
  } else {
    std::optional<std::string> out;
    if (auto o = util::readFileLimited(orig, 16u << 20); o.ok()) {
      auto back = loaded->yaml ? parseYaml(*o) : Result<ordered_json>(ordered_json::parse(*o, nullptr, false));
      if (back.ok() && !back->is_discarded() && *back == *edited) out = std::move(*o);
    }
    if (!out) {
      auto r = render(*edited, loaded->yaml);
      if (!r.ok()) return fail(report::exitCodeOf(r.error()), named + ": " + r.error().message);
      out = loaded->yaml && loaded->text.starts_with("---\n") ? "---\n" + *r : *r;
    }
    if (auto w = writeLike(file, *out, loaded->like); !w.ok()) return fail(3, w.error().message);
    std::fprintf(stderr, "kernodeck-hook: removed the hook from %s\n", file.c_str());
  }
  for (const std::string& ours : {backup, orig})
    if (::unlink(ours.c_str()) != 0 && errno != ENOENT)
      return fail(3, "cannot delete " + ours + ": " + std::strerror(errno));
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

namespace {

// `kernodeck-hook install|uninstall ...`: the node installer (hooks/install), found beside this
// binary as the package installs it (/usr/bin/kernodeck-hook: /usr/share/kernodeck-hook/install)
// or as a checkout has it (build/kernodeck-hook: hooks/install), run in place of this process.
int runInstaller(const std::vector<std::string>& args) {
  auto self = realPath("/proc/self/exe");
  std::string dir = self ? dirOf(*self) : ".";
  std::string script;
  for (const std::string& s : {dir + "/../share/kernodeck-hook/install", dir + "/../hooks/install"})
    if (::access(s.c_str(), X_OK) == 0) {
      script = s;
      break;
    }
  if (script.empty())
    return fail(1, "the installer is missing (neither " + dir + "/../share/kernodeck-hook/install nor " + dir +
                       "/../hooks/install): reinstall the kernodeck-hook package");
  std::vector<std::string> argv = {script};
  if (args[0] == "uninstall") argv.push_back("--uninstall");
  argv.insert(argv.end(), args.begin() + 1, args.end());
  Error e = util::replaceProcess(argv);  // an absolute path: no PATH lookup
  return fail(1, "cannot run " + script + ": " + e.message);
}

}  // namespace

int configCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "install" || args[0] == "uninstall")) return runInstaller(args);
  // `kernodeck-hook COMMAND --help`: before anything else is read (the command's other
  // arguments may be incomplete, as they are when a person asks).
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::string first = args.empty() ? "" : args[0], second = args.size() > 1 ? args[1] : "";
    const char* help = helpOf(first == "cdi" ? "cdi " + second : first);
    std::fputs(help ? help : kUsage, stdout);
    return 0;
  }
  ConfigArgs c = parse(args);
  if (!c.error.empty()) return fail(2, c.error + "\n" + kUsage);
  auto pos = [&](size_t i) { return i < c.positional.size() ? c.positional[i] : std::string(); };
  std::string cmd = pos(0) == "cdi" ? "cdi " + pos(1) : pos(0);
  size_t wantPositional = cmd == "cdi inject" || cmd == "cdi remove"  ? 3
                          : cmd == "runc-config" || cmd == "cdi spec" ? 2
                                                                      : 1;
  if (cmd != "cdi spec" && cmd != "cdi inject" && cmd != "cdi remove" && cmd != "runc-config" && cmd != "hooks-d")
    return fail(2, "unknown command '" + util::printable(cmd, 40) + "'\n" + kUsage);
  if (c.remove && cmd != "runc-config")
    return fail(2, "--remove is a flag of runc-config only (a CDI spec: kernodeck-hook cdi remove SPEC)");
  if (cmd == "cdi remove" || c.remove) {
    // Takes no hook flags: whatever line an earlier install wrote, every entry of ours goes.
    if (!c.hookFlags.empty() || c.given.size() != (c.remove ? 1u : 0u))
      return fail(2, cmd + (c.remove ? " --remove" : "") + " takes only the file it edits\n" + helpOf(cmd));
    if (c.positional.size() != wantPositional)
      return fail(2, "wrong number of arguments for " + cmd + "\n" + helpOf(cmd));
    if (cmd == "cdi remove")
      return unEditFile(pos(2), "a CDI spec", true, [](const ordered_json& d) { return removeHookFromCdiSpec(d); });
    return unEditFile(pos(1), "an OCI runtime config", false,
                      [](const ordered_json& d) { return removeHookFromRuntimeConfig(d); });
  }
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
