// `kernodeck probe` on this CPU machine, with fake host records, with the
// project's Python, and inside a real runc container behind kernodeck-hook.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support.h"

namespace integration_probe_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

json probe(const std::string& args, int* code, std::string* err = nullptr) {
  RunResult r = run(K + " probe --json --host-record /nonexistent " + args);
  if (code) *code = r.code;
  if (err) *err = r.err;
  return json::parse(r.out, nullptr, false);
}

std::string step(const json& r, const std::string& name) { return stepStatus(r, name); }

}  // namespace

TEST(Probe, CpuPassesWithTheMatmulChecked) {
  int code = -1;
  json r = probe("--expect cpu --host-root /nonexistent", &code);
  ASSERT_TRUE(r.is_object());
  if (r["versions"]["libtorch"].is_null()) GTEST_SKIP() << "built without LibTorch";
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(step(r, "compute"), "passed");
  EXPECT_EQ(step(r, "python"), "skipped");
  ASSERT_EQ(r["compute"]["results"].size(), 1u);
  EXPECT_TRUE(r["compute"]["results"][0]["ok"].get<bool>());
  EXPECT_TRUE(r["compute"]["results"][0]["finite"].get<bool>());
  EXPECT_NE(r["compute"]["results"][0]["checksum"].get<double>(), 0.0);
  EXPECT_EQ(r["compute"]["tolerance"]["atol"], 1e-3);
}

TEST(Probe, CudaExpectedButAbsentStopsAtDevices) {
  std::string dir = tempDir("probe-cuda");
  int code = -1;
  std::string err;
  json r = probe("--expect cuda --dev-root " + dir + " --termination-log " + dir + "/termlog", &code, &err);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 3);
  EXPECT_EQ(step(r, "versions"), "passed");
  EXPECT_EQ(step(r, "devices"), "failed");
  for (const char* s : {"compute", "python", "reconcile"}) EXPECT_EQ(step(r, s), "not_reached") << s;
  EXPECT_NE(r["first_error"].get<std::string>().find("never falls back"), std::string::npos);
  std::string tl = readFile(dir + "/termlog");
  EXPECT_NE(tl.find("step devices failed"), std::string::npos) << tl;
  EXPECT_LE(tl.size(), 4096u);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

// Issue 39 section 8: --termination-log planted by another user as a link to a file root cares
// about, in a folder root owns that its group can write (the kernel's protected_symlinks rule
// does not apply there). The old probe truncated the link's target and wrote its verdict into
// it; now the target is untouched and one line says why the log was not written.
TEST(Probe, ATerminationLogLinkPlantedByAnotherUserIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link needs root";
  std::string dir = tempDir("probe-termlink");
  writeFile(dir + "/victim", "precious\n");
  ASSERT_EQ(run("mkdir " + dir + "/shared && chmod 0775 " + dir + "/shared && ln -s " + dir + "/victim " + dir +
                "/shared/termlog && chown -h nobody " + dir + "/shared/termlog")
                .code,
            0);
  int code = -1;
  std::string err;
  json r = probe("--expect cuda --dev-root " + dir + " --termination-log " + dir + "/shared/termlog", &code, &err);
  ASSERT_TRUE(r.is_object()) << err;
  EXPECT_EQ(code, 3);  // the probe's own verdict, unchanged
  EXPECT_EQ(readFile(dir + "/victim"), "precious\n") << "the link was followed";
  EXPECT_NE(err.find("--termination-log: refusing to write"), std::string::npos) << err;
}

// Issue 49, section 3: root never writes its verdict into another user's regular file, planted
// where others can write (the kernel's protected_regular rule, whatever the sysctl) or reached
// through that user's hard link; its own new file is still written.
TEST(Probe, ATerminationLogFileOfAnotherUserIsNotWrittenInto) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting another user's file needs root";
  std::string dir = tempDir("probe-termfile");
  ASSERT_EQ(run("mkdir -m 1777 " + dir + "/sticky && mkdir -m 0755 " + dir + "/shared " + dir + "/home && " +
                "echo planted > " + dir + "/sticky/termlog && chown nobody " + dir + "/sticky/termlog && " +
                "echo precious > " + dir + "/home/notes && chown nobody " + dir + "/home/notes && " + "ln " + dir +
                "/home/notes " + dir + "/shared/termlog")
                .code,
            0);
  for (const std::string& target : {dir + "/sticky/termlog", dir + "/shared/termlog"}) {
    int code = -1;
    std::string err;
    json r = probe("--expect cuda --dev-root " + dir + " --termination-log " + target, &code, &err);
    ASSERT_TRUE(r.is_object()) << err;
    EXPECT_EQ(code, 3);  // the probe's own verdict, unchanged
    EXPECT_NE(err.find("--termination-log: refusing to write " + target), std::string::npos) << err;
  }
  EXPECT_EQ(readFile(dir + "/sticky/termlog"), "planted\n");
  EXPECT_EQ(readFile(dir + "/home/notes"), "precious\n") << "written through nobody's hard link";
  // Root's own file in the sticky directory, and a new one, are written.
  int code = -1;
  std::string err;
  writeFile(dir + "/sticky/own", "old\n");
  probe("--expect cuda --dev-root " + dir + " --termination-log " + dir + "/sticky/own", &code, &err);
  EXPECT_NE(readFile(dir + "/sticky/own").find("exit 3"), std::string::npos) << err;
  probe("--expect cuda --dev-root " + dir + " --termination-log " + dir + "/sticky/new", &code, &err);
  EXPECT_NE(readFile(dir + "/sticky/new").find("exit 3"), std::string::npos) << err;
}

TEST(Probe, Driver470AgainstACuda121ExpectationIsReconciled) {
  std::string dir = tempDir("probe-rec");
  writeFile(dir + "/host.json", json({{"schema", "kernodeck.host/v1"},
                                      {"host",
                                       {{"nvidia",
                                         {{"driver_version", "470.199.02"},
                                          {"max_cuda", "11.4"},
                                          {"gpus", json::array({{{"model", "Tesla T4"}, {"arch", "7.5"}}})}}}}}})
                                    .dump());
  writeFile(dir + "/expect.json",
            json({{"schema", "kernodeck.expect/v1"},
                  {"accelerator", "cuda"},
                  {"torch", {{"version", "2.1.0+cu121"}, {"cuda", "12.1"}, {"arch_list", {"sm_80", "sm_90"}}}},
                  {"nvidia", {{"require", {"cuda>=12.1"}}}}})
                .dump());
  // The image says the same requirement as the expectation: it is reported once.
  RunResult raw = run("NVIDIA_REQUIRE_CUDA='cuda>=12.1' " + K + " probe --json --expect cpu --host-record " + dir +
                      "/host.json --expect-from " + dir + "/expect.json --termination-log " + dir + "/termlog");
  json r = json::parse(raw.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << raw.out << raw.err;
  EXPECT_EQ(raw.code, 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "probe.cuda.unsupported"), 1);
  EXPECT_EQ(countFindings(r, "probe.arch.unsupported"), 1);  // a T4 is sm_75
  EXPECT_EQ(countFindings(r, "probe.require.unsatisfied"), 1);
  EXPECT_EQ(r["subject"]["host_record_source"], dir + "/host.json");
  EXPECT_NE(readFile(dir + "/termlog").find("probe.cuda.unsupported"), std::string::npos);
}

// A host record with a field of the wrong type is named in a warning, and the probe reads the
// host itself instead of trusting the rest of the record.
TEST(Probe, AHostRecordFieldOfTheWrongTypeIsNamed) {
  std::string dir = tempDir("probe-badrec");
  writeFile(dir + "/host.json",
            json({{"schema", "kernodeck.host/v1"},
                  {"host", {{"nvidia", {{"driver_version", "550.54.15"}, {"gpus", json::array({{{"arch", 9.0}}})}}}}}})
                .dump());
  RunResult raw = run(K + " probe --json --expect cpu --host-root /nonexistent --host-record " + dir + "/host.json");
  json r = json::parse(raw.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << raw.out << raw.err;
  ASSERT_EQ(countFindings(r, "probe.host_record.invalid"), 1) << r["findings"].dump(1);
  for (const auto& f : r["findings"])
    if (f["code"] == "probe.host_record.invalid") {
      EXPECT_EQ(
          f["message"],
          dir +
              "/host.json is not a kernodeck.host/v1 record: host.nvidia.gpus[0].arch is a number, expected a string");
    }
  EXPECT_EQ(r["subject"]["host_record_source"], "read directly under /nonexistent");
  EXPECT_EQ(r["reconcile"]["host_driver"], "");
}

// Without an expectation's architecture list, the one the project's torch reports
// (torch.cuda.get_arch_list(), as the H200 run of scripts/gpu-check showed) is checked against
// the host's GPUs. The interpreter here is a stand-in that prints what such a torch would.
TEST(Probe, ThePythonTorchArchitecturesAreCheckedAgainstTheGpus) {
  std::string dir = tempDir("probe-arch");
  writeFile(dir + "/host.json", json({{"schema", "kernodeck.host/v1"},
                                      {"host",
                                       {{"nvidia",
                                         {{"driver_version", "580.159.04"},
                                          {"max_cuda", "13.0"},
                                          {"gpus", json::array({{{"model", "NVIDIA H200"}, {"arch", "9.0"}}})}}}}}})
                                    .dump());
  writeFile(dir + "/expect.json", json({{"schema", "kernodeck.expect/v1"}, {"accelerator", "cpu"}}).dump());
  auto fakePython = [&](const std::string& name, const json& archList) {
    json out = {{"python", "3.12.3"},    {"torch", "2.11.0+cu130"}, {"cuda", "13.0"},
                {"hip", nullptr},        {"cuda_available", false}, {"devices", json::array()},
                {"arch_list", archList}, {"device", "cpu"},         {"max_abs_diff", 0.0},
                {"finite", true}};
    writeFile(dir + "/" + name, "#!/bin/sh\ncat <<'EOF'\n" + out.dump() + "\nEOF\n");
    ::chmod((dir + "/" + name).c_str(), 0755);
    return dir + "/" + name;
  };
  auto probeWith = [&](const std::string& python) {
    RunResult raw = run(K + " probe --json --expect cpu --host-record " + dir + "/host.json --expect-from " + dir +
                        "/expect.json --python " + python);
    return json::parse(raw.out, nullptr, false);
  };
  json old = probeWith(fakePython("old-python", {"sm_70", "sm_75", "sm_80", "sm_86"}));
  ASSERT_TRUE(old.is_object());
  EXPECT_EQ(step(old, "python"), "passed") << old.dump(1);
  EXPECT_EQ(countFindings(old, "probe.arch.unsupported"), 1) << old["findings"].dump(1);
  EXPECT_EQ(old["reconcile"]["arch_list"].size(), 4u);
  json ptx = probeWith(fakePython("ptx-python", {"sm_80", "compute_80"}));
  EXPECT_EQ(countFindings(ptx, "probe.arch.unsupported"), 0) << ptx["findings"].dump(1);
  json cu130 = probeWith(fakePython("cu130-python", {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}));
  EXPECT_EQ(countFindings(cu130, "probe.arch.unsupported"), 0) << cu130["findings"].dump(1);
}

// Issue 50: the expectation's gpu_code is judged per library against the host's GPUs, by the
// hook's rule: torch with sm_80;sm_90 SASS and no PTX cannot run on a B200 (naming the library),
// runs on an H100, and with compute_90 PTX runs on the B200 with a warning.
TEST(Probe, TheExpectationsGpuCodeIsJudgedPerLibrary) {
  std::string dir = tempDir("probe-gpucode");
  auto host = [&](const std::string& model, const std::string& arch) {
    std::string file = dir + "/host-" + arch + ".json";
    writeFile(file, json({{"schema", "kernodeck.host/v1"},
                          {"host",
                           {{"nvidia",
                             {{"driver_version", "580.65.06"},
                              {"max_cuda", "13.0"},
                              {"gpus", json::array({{{"model", model}, {"arch", arch}}})}}}}}})
                        .dump());
    return file;
  };
  auto expect = [&](const std::string& name, const json& ptx) {
    json lib = {{"library", "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"},
                {"sass", {"sm_80", "sm_90"}},
                {"ptx", ptx}};
    writeFile(dir + "/" + name,
              json({{"schema", "kernodeck.expect/v1"}, {"accelerator", "cpu"}, {"gpu_code", {lib}}}).dump());
    return dir + "/" + name;
  };
  auto probeWith = [&](const std::string& hostFile, const std::string& expectFile) {
    RunResult raw =
        run(K + " probe --json --expect cpu --host-record " + hostFile + " --expect-from " + expectFile);
    return json::parse(raw.out, nullptr, false);
  };
  std::string b200 = host("NVIDIA B200", "10.0"), h100 = host("NVIDIA H100 80GB HBM3", "9.0");
  std::string sassOnly = expect("sass.json", json::array()), withPtx = expect("ptx.json", {"compute_90"});
  json refused = probeWith(b200, sassOnly);
  ASSERT_TRUE(refused.is_object());
  ASSERT_EQ(countFindings(refused, "probe.arch.unsupported"), 1) << refused["findings"].dump(1);
  for (const auto& f : refused["findings"]) {
    if (f["code"] != "probe.arch.unsupported") continue;
    EXPECT_NE(f["message"].get<std::string>().find("libtorch_cuda.so cannot run on NVIDIA B200"), std::string::npos)
        << f.dump();
  }
  EXPECT_EQ(refused["reconcile"]["gpu_code"]["fit"]["10.0"], "none") << refused["reconcile"].dump();
  json h = probeWith(h100, sassOnly);
  EXPECT_EQ(countFindings(h, "probe.arch.unsupported") + countFindings(h, "probe.arch.ptx_only"), 0)
      << h["findings"].dump(1);
  json jit = probeWith(b200, withPtx);
  EXPECT_EQ(countFindings(jit, "probe.arch.unsupported"), 0) << jit["findings"].dump(1);
  EXPECT_EQ(countFindings(jit, "probe.arch.ptx_only"), 1) << jit["findings"].dump(1);
}

TEST(Probe, ThePythonStepKeepsTheFirstError) {
  std::string dir = tempDir("probe-py");
  int code = -1;
  json missing = probe("--expect cpu --python " + dir + "/no-such-python", &code);
  EXPECT_EQ(code, 3);
  EXPECT_EQ(step(missing, "python"), "failed");
  EXPECT_EQ(step(missing, "reconcile"), "not_reached");
  writeFile(dir + "/slow-python", "#!/bin/sh\nsleep 30\n");
  ::chmod((dir + "/slow-python").c_str(), 0755);
  auto t0 = std::chrono::steady_clock::now();
  json slow = probe("--expect cpu --python-timeout 1 --python " + dir + "/slow-python", &code);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(step(slow, "python"), "failed");
  EXPECT_NE(slow["first_error"].get<std::string>().find("did not finish"), std::string::npos);
  // A Python without torch: the import error is the step's first error.
  writeFile(dir + "/notorch.py", "");
  RunResult hasTorch = run("/usr/bin/python3 -c 'import torch'");
  json noTorch = probe("--expect cpu --python /usr/bin/python3", &code);
  if (hasTorch.code == 0) {
    EXPECT_EQ(step(noTorch, "python"), "passed") << noTorch.dump(1);
    EXPECT_EQ(noTorch["python"]["result"]["device"], "cpu");
    EXPECT_LT(noTorch["python"]["result"]["max_abs_diff"].get<double>(), 1e-3);
  } else {
    EXPECT_EQ(step(noTorch, "python"), "failed");
    EXPECT_NE(noTorch["first_error"].get<std::string>().find("ModuleNotFoundError"), std::string::npos);
  }
}

// The snippet's output comes from the judged image's Python: nested past util::kMaxJsonDepth it
// is refused like any output that is not a JSON object (the step fails, naming the interpreter),
// and none of it reaches the report.
TEST(Probe, ADeeplyNestedPythonOutputFailsTheStep) {
  std::string dir = tempDir("probe-deep");
  std::string deep = R"({"python":"3.12.3","torch":"2.11.0","cuda":null,"hip":null,"cuda_available":false,)"
                     R"("devices":[],"device":"cpu","max_abs_diff":0.0,"finite":true,"x":)" +
                     std::string(5000, '[') + std::string(5000, ']') + "}";
  writeFile(dir + "/out.json", deep);
  writeFile(dir + "/deep-python", "#!/bin/sh\ncat " + dir + "/out.json\n");
  ::chmod((dir + "/deep-python").c_str(), 0755);
  int code = -1;
  json r = probe("--expect cpu --python " + dir + "/deep-python", &code);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(code, 3);
  EXPECT_EQ(step(r, "python"), "failed") << r.dump(1);
  EXPECT_FALSE(r["python"].contains("result"));
  std::string err = r["first_error"].get<std::string>();
  EXPECT_NE(err.find(dir + "/deep-python"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

// Inside a real container: the hook writes the host record, the probe reads it;
// a device the cgroup denies is reported as such, and the termination log says why.
TEST(Probe, InsideRuncBehindTheHook) {
  if (::geteuid() != 0 || !haveTool("runc")) GTEST_SKIP() << "needs root and runc";
  std::string base = tempDir("probe-runc");
  std::string host = base + "/host";
  ASSERT_EQ(run(std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize h100-550-open " + host).code, 0);
  std::string build = std::string(KERNODECK_BIN).substr(0, std::string(KERNODECK_BIN).rfind('/'));
  int n = 0;
  auto runIn = [&](const std::string& expect, const json& devices, std::string& out) {
    std::string b = base + "/bundle" + std::to_string(n);
    run("mkdir -p " + b + "/rootfs/usr " + b + "/rootfs/etc " + b + "/rootfs/kd " + b + "/out && cd " + b +
        "/rootfs && ln -s usr/lib lib && ln -s usr/lib64 lib64 && ln -s usr/bin bin && ln -s usr/sbin sbin && cd " + b +
        " && runc spec");
    json cfg = json::parse(readFile(b + "/config.json"));
    cfg["root"]["readonly"] = false;
    cfg["process"]["terminal"] = false;
    cfg["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
    cfg["process"]["args"] = {"/kd/kernodeck",     "probe",       "--json", "--expect", expect,
                              "--termination-log", "/out/termlog"};
    for (const auto& [src, dst, rw] : std::vector<std::tuple<std::string, std::string, bool>>{
             {"/usr", "/usr", false}, {"/etc", "/etc", false}, {build, "/kd", false}, {b + "/out", "/out", true}})
      cfg["mounts"].push_back({{"destination", dst},
                               {"type", "bind"},
                               {"source", src},
                               {"options", rw ? json({"rbind", "rw"}) : json({"rbind", "ro"})}});
    cfg["linux"]["devices"] = devices;
    json hook = {{"path", HOOK_BIN}, {"args", {"kernodeck-hook", "--host-root", host}}};
    cfg["hooks"] = {{"createRuntime", json::array({hook})}};
    writeFile(b + "/config.json", cfg.dump(1));
    std::string id = "kdk-probe-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
    RunResult r = run("timeout 120 runc run --bundle " + b + " " + id);
    run("runc delete -f " + id + " >/dev/null 2>&1");
    out = readFile(b + "/out/termlog");
    return r;
  };
  json devices = json::array({{{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}},
                              {{"path", "/dev/nvidia-uvm"}, {"type", "c"}, {"major", 508}, {"minor", 0}},
                              {{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}});
  std::string termlog;
  RunResult cpu = runIn("cpu", devices, termlog);
  json rc = json::parse(cpu.out, nullptr, false);
  ASSERT_TRUE(rc.is_object()) << cpu.out << cpu.err;
  EXPECT_EQ(rc["subject"]["host_record_source"], "/run/kernodeck/host.json");
  EXPECT_EQ(rc["reconcile"]["host_driver"], "550.54.15");
  EXPECT_EQ(rc["reconcile"]["gpus_visible"], 1);
  EXPECT_EQ(countFindings(rc, "probe.device.denied"), 3);  // runc created the nodes; the cgroup denies them
  EXPECT_EQ(cpu.code, 1);
  RunResult cuda = runIn("cuda", devices, termlog);
  json rg = json::parse(cuda.out, nullptr, false);
  ASSERT_TRUE(rg.is_object()) << cuda.out << cuda.err;
  EXPECT_EQ(cuda.code, 3);
  EXPECT_EQ(stepStatus(rg, "devices"), "failed");
  EXPECT_NE(termlog.find("step devices failed"), std::string::npos) << termlog;
  EXPECT_NE(termlog.find("cgroup"), std::string::npos) << termlog;
}

}  // namespace integration_probe_test
