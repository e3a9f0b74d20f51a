// See hook_engines.h.
#include "hook_engines.h"
#include "no_host_hooks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

using nlohmann::json;

namespace kdktest::engines {

std::string hostTree(const std::string& name) {
  static std::map<std::string, std::string> made;
  if (made.count(name)) return made[name];
  std::string d = tempDir("enginehost") + "/" + name;
  RunResult r = run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + name + " " + d);
  return made[name] = r.code == 0 ? d : std::string();
}

std::string busyboxRootfs() {
  static std::string dir;
  if (!dir.empty()) return dir;
  dir = tempDir("rootfs");
  run("mkdir -p " + dir + "/bin && cp \"$(command -v busybox)\" " + dir +
      "/bin/busybox && for a in sh cat; do ln -s busybox " + dir + "/bin/$a; done");
  return dir;
}

bool crunReady() {
  std::string controllers = readFile("/sys/fs/cgroup/unified/cgroup.controllers");
  if (controllers.find("hugetlb") != std::string::npos)
    run("mkdir -p /sys/fs/cgroup/hugetlb && mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb");
  return readFile("/sys/fs/cgroup/unified/cgroup.controllers").find("hugetlb") == std::string::npos;
}

std::string containersConf() {
  static std::string conf;
  if (!conf.empty()) return conf;
  conf = tempDir("podmanconf") + "/containers.conf";
  writeFile(conf, "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n[engine]\n" + noHostHooks());
  return conf;
}

// `yaml`: written as nvidia-ctk writes it by default (YAML, /etc/cdi/nvidia.yaml), by hand here
// so that the hook's own YAML writer is not what podman is checked against. `dir`: where the
// runtime reads specs (podman 4.3: /var/run/cdi; containerd: its cdi_spec_dirs).
CdiSpec fakeNvidiaSpec(const std::string& host, bool yaml, const std::string& dir) {
  static int n = 0;
  CdiSpec s;
  s.kind = "kdk" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".test/gpu";
  s.file = dir + "/kdk-test-" + std::to_string(::getpid()) + "-" + std::to_string(n) + (yaml ? ".yaml" : ".json");
  json spec = {
      {"cdiVersion", "0.5.0"},
      {"kind", s.kind},
      {"devices",
       {{{"name", "0"},
         {"containerEdits", {{"deviceNodes", {{{"path", "/dev/nvidia0"}, {"hostPath", host + "/dev/nvidia0"}}}}}}}}},
      {"containerEdits",
       {{"env", {"NVIDIA_VISIBLE_DEVICES=void"}},
        {"deviceNodes",
         {{{"path", "/dev/nvidiactl"}, {"hostPath", host + "/dev/nvidiactl"}},
          {{"path", "/dev/nvidia-uvm"}, {"hostPath", host + "/dev/nvidia-uvm"}}}}}}};
  std::string yamlText = "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - hostPath: " + host +
                         "/dev/nvidiactl\n    path: /dev/nvidiactl\n" + "  - hostPath: " + host +
                         "/dev/nvidia-uvm\n    path: /dev/nvidia-uvm\n  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n" +
                         "devices:\n- containerEdits:\n    deviceNodes:\n    - hostPath: " + host +
                         "/dev/nvidia0\n      path: /dev/nvidia0\n" + "  name: \"0\"\nkind: " + s.kind + "\n";
  run("mkdir -p " + dir);
  writeFile(s.file, yaml ? yamlText : spec.dump(2));
  static std::vector<std::string> files;
  if (files.empty())
    std::atexit([] {
      for (const auto& f : files) {
        ::unlink(f.c_str());
        ::unlink((f + ".kernodeck-backup").c_str());
      }
    });
  files.push_back(s.file);
  return s;
}

// A YAML spec as a third party reads it (PyYAML); a JSON one as itself.
json readSpec(const std::string& file) {
  return file.ends_with(".yaml") ? readYamlWithPyYaml(file) : json::parse(readFile(file), nullptr, false);
}

std::string lastLine(const std::string& file) {
  std::string text = readFile(file), last;
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// Checks one run: started (the container printed its host record) or refused.
void expectOutcome(const RunResult& r, const std::string& log, bool starts, bool allowed, const std::string& where,
                   const std::string& reasonVisible) {
  json line = json::parse(lastLine(log), nullptr, false);
  ASSERT_TRUE(line.is_object()) << where << ": no log line in " << log << " (exit " << r.code << ")\n"
                                << r.out << r.err;
  if (starts) {
    ASSERT_EQ(r.code, 0) << where << "\n" << r.err;
    size_t brace = r.out.find('{');
    json rec = json::parse(brace == std::string::npos ? std::string() : r.out.substr(brace), nullptr, false);
    ASSERT_TRUE(rec.is_object()) << where << "\n" << r.out << r.err << "\nlog: " << lastLine(log);
    EXPECT_EQ(rec["decision"], allowed ? "allow" : "warn") << where;
    EXPECT_EQ(rec["gpu_container"], true) << where;
    EXPECT_EQ(line["decision"], allowed ? "allow" : "warn") << where;
  } else {
    EXPECT_NE(r.code, 0) << where;
    EXPECT_EQ(line["decision"], "block") << where;
    EXPECT_NE(line["reason"].get<std::string>().find("hook.require.unsatisfied"), std::string::npos) << where;
    if (!reasonVisible.empty()) {
      EXPECT_NE((r.err + r.out).find(reasonVisible), std::string::npos) << where << "\n" << r.err << r.out;
    }
  }
}

std::string bundleWithHook(const std::string& runtime, const std::string& policy, const std::string& host,
                           const std::string& log, const std::string& require, const json& extra) {
  std::string b = tempDir("enginebundle");
  run("mkdir -p " + b + " && cp -a " + busyboxRootfs() + " " + b + "/rootfs && cd " + b + " && " + runtime + " spec");
  json cfg = json::parse(readFile(b + "/config.json"));
  cfg["process"]["terminal"] = false;
  cfg["process"]["args"] = {"/bin/sh", "-c", "cat /run/kernodeck/host.json"};
  cfg["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  cfg["process"]["env"].push_back("NVIDIA_REQUIRE_CUDA=" + require);
  cfg["root"]["readonly"] = false;
  cfg["linux"]["devices"] = {{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                             {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", 508}, {"minor", 0}},
                             {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}};
  // Someone else's hook that must survive the merge. It reads the state, as hooks do (crun 1.8
  // fails the start with EPIPE when a hook exits before crun has written it), and has a timeout:
  // crun waits for a hook with a timeout by sigtimedwait with SIGCHLD blocked throughout, so an
  // earlier hook without one leaves a stale SIGCHLD that swallows a fast next hook's exit
  // ("timeout expired"; both seen under load on two cores, crun's run_process_with_stdin_timeout_envp).
  cfg["hooks"] = {{"createRuntime",
                   {{{"path", "/bin/sh"}, {"args", {"sh", "-c", "cat >/dev/null"}}, {"timeout", 10}}}}};
  cfg.update(extra, true);
  writeFile(b + "/config.json", cfg.dump(1));
  RunResult add = run(kHook + " runc-config " + b + "/config.json --binary " + kHook + " --policy " + policy +
                      " --host-root " + host + " --log " + log);
  EXPECT_EQ(add.code, 0) << add.err;
  return b;
}

}  // namespace kdktest::engines
