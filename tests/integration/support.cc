#include "support.h"

#include "no_host_hooks.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "kernodeck/util/process.h"

namespace kdktest {

namespace {
std::vector<std::string>& cleanup() {
  static std::vector<std::string> dirs;
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      if (std::getenv("KDK_KEEP_TEMP")) return;
      for (const auto& d : cleanup()) std::system(("rm -rf '" + d + "'").c_str());
    });
  }
  return dirs;
}
}  // namespace

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json readYamlWithPyYaml(const std::string& path) {
  RunResult r =
      run("python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " + path);
  return nlohmann::json::parse(r.out, nullptr, false);
}

void writeFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string tempDir(const std::string& tag) {
  std::string t = "/tmp/kdk-" + tag + "-XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) std::abort();
  cleanup().push_back(buf.data());
  return buf.data();
}

std::string noHostHooks() {
  static const std::string dir = tempDir("nohooks");
  return "hooks_dir = [\"" + dir + "\"]\n";
}

RunResult run(const std::string& cmd) {
  static int counter = 0;
  std::string errFile = "/tmp/kdk-stderr-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  RunResult r;
  FILE* p = ::popen(("(" + cmd + ") 2>" + errFile).c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = readFile(errFile);
  ::unlink(errFile.c_str());
  return r;
}

bool haveTool(const std::string& name) { return run("command -v " + name).code == 0; }

std::string umociUnpack() { return ::geteuid() == 0 ? "umoci unpack" : "umoci unpack --rootless"; }

std::string umociBusyboxCommands(const std::string& L, const std::string& B) {
  return "umoci init --layout " + L + "; umoci new --image " + L + ":base; " + umociUnpack() + " --image " + L +
         ":base " + B + " >/dev/null; mkdir -p " + B + "/rootfs/bin " + B +
         "/rootfs/etc; cp \"$(command -v busybox)\" " + B + "/rootfs/bin/busybox; ln -s busybox " + B +
         "/rootfs/bin/sh; printf 'ID=umocitest\\n' > " + B + "/rootfs/etc/os-release; umoci repack --image " + L +
         ":base " + B;
}

nlohmann::json auditJson(const std::string& args, int* code, std::string* err) {
  RunResult r = run(std::string(KERNODECK_BIN) + " audit --json " + args);
  if (code) *code = r.code;
  if (err) *err = r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::string mkimage(const nlohmann::json& spec, const std::string& dir) {
  std::string specFile = dir + ".spec.json";
  writeFile(specFile, spec.dump());
  RunResult r = run(std::string(MKIMAGE_BIN) + " " + specFile + " " + dir);
  ::unlink(specFile.c_str());
  if (r.code != 0) return {};
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

int countFindings(const nlohmann::json& report, const std::string& code) {
  int n = 0;
  if (!report.is_object() || !report.contains("findings")) return -1;
  for (const auto& f : report["findings"])
    if (f["code"] == code) ++n;
  return n;
}

std::string stepStatus(const nlohmann::json& report, const std::string& step) {
  if (!report.is_object() || !report.contains("steps")) return "<no report>";
  for (const auto& s : report["steps"])
    if (s["name"] == step) return s["status"];
  return "<no step>";
}

std::string stepError(const nlohmann::json& report, const std::string& step) {
  if (!report.is_object() || !report.contains("steps")) return "";
  for (const auto& s : report["steps"])
    if (s["name"] == step) return s.value("error", "");
  return "";
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool lexists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

RunResult kdk(const std::vector<std::string>& args, const std::string& cwd, std::map<std::string, std::string> env) {
  kernodeck::util::ProcessSpec s;
  s.env = std::move(env);
  s.argv = {KERNODECK_BIN};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.cwd = cwd;
  s.timeoutMs = 120000;
  auto r = kernodeck::util::runProcess(s);
  if (!r.ok()) return {-1, "", r.error().message};
  return {r->exited ? r->exitCode : 128 + r->signal, r->out, r->err};
}

Rendered renderInChromium(const std::string& htmlFile, const std::string& workDir) {
  std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --user-data-dir=" +
      workDir + "/chrome";
  Rendered r;
  RunResult shot = run("timeout 120 chromium" + flags + " --window-size=1024,768 --screenshot=" + workDir +
                       "/screenshot.png file://" + htmlFile);
  r.png = readFile(workDir + "/screenshot.png");
  RunResult dom = run("timeout 120 chromium" + flags + " --dump-dom file://" + htmlFile);
  r.dom = dom.out;
  r.err = shot.err + dom.err;
  return r;
}

}  // namespace kdktest
