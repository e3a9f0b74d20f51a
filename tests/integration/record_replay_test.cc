// dossier replay --run on the example project (examples/embeddings, Debian's python3-torch):
// the project is committed to a git repository, run, recorded and put in a dossier; its venv
// and outputs are deleted and a code change is committed after the fact; the replay in a fresh
// folder regenerates the outputs from the revision the dossier carries and passes. A dossier
// carrying changed weights stops at placing them, naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "support.h"

namespace integration_record_replay_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;



}  // namespace

TEST(RecordReplay, EmbeddingsProjectReplaysAtTheRecordedRevisionAndStopsOnChangedWeights) {
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (python3-torch, python3-numpy): the example "
                    "project cannot run";
  std::string base = tempDir("replay"), proj = base + "/proj", d = base + "/dossier";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  // The example project, committed; its own venv made as its README says; one run kept as the expected outputs.
  ASSERT_EQ(run("cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + proj + " && cd " + proj +
                " && rm -rf out venv expected __pycache__ && " + "git init -q && " + git + "add -A && " + git +
                "commit -q -m embeddings")
                .code,
            0);
  RunResult venv =
      run("cd " + proj +
          " && /usr/bin/python3 -m venv --system-site-packages --without-pip venv && PIP_CONFIG_FILE=/dev/null " +
          "venv/bin/python -m pip install -q --no-index -r requirements.txt && " +
          "venv/bin/python embed.py --inputs data/inputs.csv --weights weights.pt --out out && cp -r out expected");
  ASSERT_EQ(venv.code, 0) << venv.err << venv.out;
  RunResult init =
      run("cd " + proj + " && " + K +
          " reference init --repo . --entry-point 'python embed.py --inputs data/inputs.csv --weights weights.pt --out "
          "out'" +
          " --outputs out --data inputs=data/inputs.csv --weights encoder=weights.pt --requirements requirements.txt "
          "--python /usr/bin/python3" +
          " --expected expected --ids ids.txt --criterion 'abs<=1e-6' --why 'float32 on one CPU thread: only rounding "
          "may move'" +
          " --criterion 'knn:5>=0.95' --why 'search uses the 5 nearest neighbours' --seed torch=1234" +
          " --determinism torch.use_deterministic_algorithms=True --host-root /nonexistent -o reference.json");
  ASSERT_EQ(init.code, 0) << init.err << init.out;
  RunResult check = run(K + " sample check --json -o " + base + "/check.json " + proj + "/out --reference " + proj +
                        "/reference.json");
  ASSERT_EQ(check.code, 0) << check.err << check.out;
  RunResult build = run(K + " dossier build " + d + " --reference " + proj + "/reference.json --report " + base +
                        "/check.json --include " + proj + "/requirements.txt --include " + proj + "/make_fixtures.py");
  ASSERT_EQ(build.code, 0) << build.err << build.out;
  // Everything the replay needs is carried and in the hash manifest.
  std::string manifest = readFile(d + "/MANIFEST.sha256");
  for (const char* f :
       {"  code.tar\n", "  inputs/data/inputs\n", "  inputs/weights/encoder\n", "  expected/embeddings.npy\n",
        "  expected/ids.txt\n", "  files/requirements.txt\n", "  files/make_fixtures.py\n", "  procedure.md\n"})
    EXPECT_NE(manifest.find(f), std::string::npos) << f << "\n" << manifest;
  // procedure.md is this project's: its revision, interpreter, requirements and entry point.
  json ref = json::parse(readFile(proj + "/reference.json"));
  std::string md = readFile(d + "/procedure.md");
  for (std::string s :
       {ref["code"]["revision"].get<std::string>(),
        std::string("/usr/bin/python3 -m venv --system-site-packages --without-pip REPLAY/venv"),
        std::string("torch>=1.12"),
        std::string("REPLAY/venv/bin/python embed.py --inputs data/inputs.csv --weights weights.pt --out out"),
        std::string("`knn:5>=0.95` because: search uses the 5 nearest neighbours"),
        std::string("files/make_fixtures.py")})
    EXPECT_NE(md.find(s), std::string::npos) << s << "\n" << md;

  // The project's venv and outputs go; a one-line change is committed after the reference.
  ASSERT_EQ(run("cd " + proj +
                " && rm -rf venv out && sed -i 's/emb = model.encoder(x)/emb = 2 * model.encoder(x)/' embed.py && grep "
                "-q '2 \\* model' embed.py && " +
                git + "commit -q -am 'scale embeddings'")
                .code,
            0);

  // Without --run: the commands are printed, the project is not run.
  RunResult dry = run("mkdir -p " + base + "/cwd && cd " + base + "/cwd && " + K + " dossier replay " + d);
  EXPECT_NE(dry.err.find("dossier replay --run would run"), std::string::npos) << dry.err;
  EXPECT_NE(dry.err.find("REPLAY/venv/bin/python embed.py"), std::string::npos) << dry.err;
  EXPECT_FALSE(exists(proj + "/out"));

  // --run in a fresh folder: code at the recorded revision, inputs placed, a new venv, the entry point, the check.
  RunResult replay = run("cd " + base + "/cwd && " + K + " dossier replay --run --json --work " + base + "/fresh " + d);
  json rj = json::parse(replay.out, nullptr, false);
  ASSERT_TRUE(rj.is_object()) << replay.err;
  EXPECT_EQ(replay.code, 0) << replay.err << rj.dump(1);
  for (const char* s : {"verify", "code", "place", "environment", "run", "check"})
    EXPECT_EQ(stepStatus(rj, s), "passed") << s << rj.dump(1);
  EXPECT_EQ(countFindings(rj, "replay.matches"), 1) << rj.dump(1);
  EXPECT_TRUE(exists(base + "/fresh/project/out/embeddings.npy"));  // regenerated
  EXPECT_TRUE(exists(base + "/fresh/venv/bin/python"));
  EXPECT_EQ(readFile(base + "/fresh/project/embed.py").find("2 * model"),
            std::string::npos);         // the recorded revision, not the later commit
  EXPECT_FALSE(exists(proj + "/out"));  // nothing written back into the project
  EXPECT_NE(replay.err.find("+ cd " + base + "/fresh/project && " + base + "/fresh/venv/bin/python embed.py"),
            std::string::npos)
      << replay.err;

  // --python uses an interpreter as it is: no venv.
  RunResult given = run(K + " dossier replay --run --json --python /usr/bin/python3 --work " + base + "/fresh2 " + d);
  json gj = json::parse(given.out, nullptr, false);
  ASSERT_TRUE(gj.is_object()) << given.err;
  EXPECT_EQ(given.code, 0) << given.err << gj.dump(1);
  EXPECT_EQ(stepStatus(gj, "environment"), "skipped");
  EXPECT_FALSE(exists(base + "/fresh2/venv"));

  // Without code.tar, the code is cloned from --repo and checked out at the recorded revision.
  std::string bare = base + "/dossier-without-code";
  ASSERT_EQ(run("cp -r " + d + " " + bare + " && rm " + bare + "/code.tar && grep -v '  code.tar$' " + d +
                "/MANIFEST.sha256 > " + bare + "/MANIFEST.sha256")
                .code,
            0);
  RunResult cloned = run(K + " dossier replay --run --json --python /usr/bin/python3 --repo " + proj + " --work " +
                         base + "/fresh-clone " + bare);
  json cj = json::parse(cloned.out, nullptr, false);
  ASSERT_TRUE(cj.is_object()) << cloned.err;
  EXPECT_EQ(cloned.code, 0) << cloned.err << cj.dump(1);
  EXPECT_NE(cloned.err.find("checkout --quiet " + ref["code"]["revision"].get<std::string>()), std::string::npos)
      << cloned.err;
  EXPECT_EQ(readFile(base + "/fresh-clone/project/embed.py").find("2 * model"), std::string::npos);
  // Without --repo, a relative recorded repository cannot be found: said at the code step.
  RunResult noRepo = run(K + " dossier replay --run --json --work " + base + "/fresh-norepo " + bare);
  EXPECT_EQ(noRepo.code, 3);
  EXPECT_NE(stepError(json::parse(noRepo.out, nullptr, false), "code").find("pass --repo PATH"), std::string::npos)
      << noRepo.out;

  // A fresh folder means fresh: a used one is refused.
  EXPECT_EQ(run(K + " dossier replay --run --work " + base + "/fresh " + d).code, 3);

  // The weights change after the reference; a dossier built now carries them and the replay stops at placing them,
  // named.
  ASSERT_EQ(
      run("cd " + proj +
          " && /usr/bin/python3 -c \"import torch; sd = torch.load('weights.pt'); sd['encoder.0.bias'][0] += 1e-3; "
          "torch.save(sd, 'weights.pt')\"")
          .code,
      0);
  RunResult build2 = run(K + " dossier build --json " + base + "/dossier2 --reference " + proj +
                         "/reference.json --report " + base + "/check.json");
  json b2 = json::parse(build2.out, nullptr, false);
  ASSERT_TRUE(b2.is_object()) << build2.err;
  EXPECT_EQ(countFindings(b2, "dossier.input.changed"), 1) << b2.dump(1);
  RunResult bad = run(K + " dossier replay --run --json --work " + base + "/fresh3 " + base + "/dossier2");
  json bj = json::parse(bad.out, nullptr, false);
  ASSERT_TRUE(bj.is_object()) << bad.err;
  EXPECT_EQ(bad.code, 3);
  EXPECT_EQ(stepStatus(bj, "code"), "passed");
  EXPECT_EQ(stepStatus(bj, "place"), "failed") << bj.dump(1);
  EXPECT_NE(stepError(bj, "place").find("weights 'encoder' (weights.pt) does not have the reference's hash"),
            std::string::npos)
      << bj.dump(1);
  for (const char* s : {"environment", "run", "check"}) EXPECT_EQ(stepStatus(bj, s), "not_reached") << s;
  EXPECT_FALSE(exists(base + "/fresh3/venv"));

  // A dossier is someone else's: each hostile field below, with a manifest that matches it, stops
  // the replay at its step, said in one line, and nothing is run or written outside the folder.
  std::string mark = base + "/owned";
  struct Case {
    const char* field;  // JSON pointer into reference.json
    json value;
    const char* step;
    const char* says;
  } cases[] = {
      {"/weights/0/path", "../../outside.pt", "place", "is recorded outside the project folder"},
      {"/packages/python/interpreter", "/bin/sh", "environment", "is not an absolute path to a python"},
      {"/code/entry_point", "sh -c touch${IFS}" + mark, "run", "is neither python nor a file of the project"},
      {"/code/entry_point", "/bin/touch " + mark, "run", "is neither python nor a file of the project"},
      {"/code/outputs", "../..", "run", "is not a path inside the project"},
  };
  std::string goodRef = readFile(d + "/reference.json"), goodManifest = readFile(d + "/MANIFEST.sha256");
  auto install = [&](const std::string& name, const std::string& text) {
    writeFile(d + "/" + name, text);
    std::string m;
    for (const auto& line : kernodeck::util::split(goodManifest, '\n'))
      if (!line.empty())
        m += (line.ends_with("  " + name) ? kernodeck::util::sha256Hex(text) + "  " + name : line) + "\n";
    writeFile(d + "/MANIFEST.sha256", m);
  };
  int n = 0;
  for (const auto& c : cases) {
    json j = json::parse(goodRef);
    j[json::json_pointer(c.field)] = c.value;
    install("reference.json", j.dump(2));
    std::string work = base + "/hostile" + std::to_string(n++);
    // --python (no venv) where the case is past the environment step: seconds, not minutes.
    std::string python = std::string(c.step) == "run" ? " --python /usr/bin/python3" : "";
    RunResult h = run(K + " dossier replay --run --json" + python + " --work " + work + " " + d);
    json hj = json::parse(h.out, nullptr, false);
    ASSERT_TRUE(hj.is_object()) << c.field << h.err;
    EXPECT_EQ(h.code, 3) << c.field;
    EXPECT_EQ(stepStatus(hj, c.step), "failed") << c.field << hj.dump(1);
    EXPECT_NE(stepError(hj, c.step).find(c.says), std::string::npos) << c.field << hj.dump(1);
    EXPECT_FALSE(exists(mark)) << c.field;
    EXPECT_FALSE(exists(base + "/outside.pt")) << c.field;
    EXPECT_TRUE(exists(base + "/proj/weights.pt")) << c.field;  // "../.." as outputs removed nothing
  }
  install("reference.json", goodRef);
  // A code.tar with a member that climbs out, or a link that points out, is refused whole.
  for (const char* member : {"../escape.txt", "link"}) {
    std::string py = std::string("import io, tarfile, sys\nt = tarfile.open(sys.argv[1], 'w')\n") +
                     (std::string(member) == "link"
                          ? "i = tarfile.TarInfo('link'); i.type = tarfile.SYMTYPE; i.linkname = '" + base +
                                "'; t.addfile(i)\ni = tarfile.TarInfo('link/escape.txt'); i.size = 1; t.addfile(i, "
                                "io.BytesIO(b'x'))\n"
                          : "i = tarfile.TarInfo('../escape.txt'); i.size = 1; t.addfile(i, io.BytesIO(b'x'))\n") +
                     "t.close()\n";
    writeFile(base + "/mktar.py", py);
    ASSERT_EQ(run("/usr/bin/python3 " + base + "/mktar.py " + base + "/evil.tar").code, 0);
    install("code.tar", readFile(base + "/evil.tar"));
    std::string work = base + "/hostile" + std::to_string(n++);
    RunResult h = run(K + " dossier replay --run --json --work " + work + " " + d);
    json hj = json::parse(h.out, nullptr, false);
    ASSERT_TRUE(hj.is_object()) << member << h.err;
    EXPECT_EQ(h.code, 3) << member;
    EXPECT_EQ(stepStatus(hj, "code"), "failed") << member << hj.dump(1);
    EXPECT_FALSE(exists(work + "/escape.txt")) << member;
    EXPECT_FALSE(exists(base + "/escape.txt")) << member;
  }
}

// The reference kept outside the code folder (`reference init -o ../ref.json --repo app`): every
// path is recorded relative to the code's folder, so the replay places the inputs, runs the entry
// point and finds the outputs in the project, and the plan without --run shows the same paths.
TEST(RecordReplay, AReferenceOutsideTheCodeFolderReplays) {
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy: the example project cannot run";
  std::string base = tempDir("replay-outside"), work = base + "/work", app = work + "/app";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  ASSERT_EQ(run("mkdir -p " + work + " && cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + app +
                " && cd " + app + " && rm -rf out venv expected __pycache__ && git init -q && " + git + "add -A && " +
                git + "commit -q -m embeddings && /usr/bin/python3 embed.py --inputs data/inputs.csv --weights " +
                "weights.pt --out out && cp -r out expected")
                .code,
            0);
  RunResult init =
      run("cd " + work + " && " + K +
          " reference init -o ../ref.json --repo app --entry-point 'python embed.py --inputs "
          "data/inputs.csv --weights weights.pt --out out' --outputs app/out --data "
          "inputs=app/data/inputs.csv --weights encoder=app/weights.pt --requirements app/requirements.txt "
          "--python /usr/bin/python3 --expected app/expected --ids ids.txt --criterion 'abs<=1e-6' --why "
          "'float32 on one CPU thread' --host-root /nonexistent");
  ASSERT_EQ(init.code, 0) << init.err << init.out;
  json ref = json::parse(readFile(base + "/ref.json"));
  EXPECT_EQ(ref["code"]["repo"], "work/app");
  EXPECT_EQ(ref["code"]["root"], "work/app");
  EXPECT_EQ(ref["data"][0]["path"], "data/inputs.csv");
  EXPECT_EQ(ref["code"]["outputs"], "out");
  RunResult build = run("cd " + base + " && " + K + " dossier build dossier --reference ref.json");
  ASSERT_EQ(build.code, 3) << build.err << build.out;  // written; no check report, so its verdict is incomplete
  RunResult plan = run(K + " dossier replay " + base + "/dossier");
  EXPECT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.err.find("REPLAY/project/data/inputs.csv"), std::string::npos) << plan.err;
  EXPECT_EQ(plan.err.find("project/app/"), std::string::npos) << plan.err;
  RunResult replay =
      run(K + " dossier replay --run --json --python /usr/bin/python3 --work " + base + "/fresh " + base + "/dossier");
  json rj = json::parse(replay.out, nullptr, false);
  ASSERT_TRUE(rj.is_object()) << replay.err;
  EXPECT_EQ(replay.code, 0) << replay.err << rj.dump(1);
  EXPECT_EQ(countFindings(rj, "replay.matches"), 1) << rj.dump(1);
  EXPECT_TRUE(exists(base + "/fresh/project/out/embeddings.npy"));
}

// `dossier build --wheels`: the example built offline into its own wheel, carried and locked by
// sha256 in pylock.toml; the replay installs exactly it with --require-hashes (Debian's pip 23
// reads no pylock.toml: the lock becomes --hash lines), compares the rebuilt inventory with the
// lock, and stops at `environment`, naming the wheel, when one byte of it changed.
TEST(RecordReplay, ReplaysFromHashedWheelsAndStopsOnAChangedByte) {
  if (run("/usr/bin/python3 -c 'import torch, numpy, setuptools, wheel'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch, numpy, setuptools and wheel";
  std::string base = tempDir("replay-wheels"), proj = base + "/proj", d = base + "/dossier";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  ASSERT_EQ(run("cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + proj + " && cd " + proj +
                " && rm -rf out venv expected __pycache__ build *.egg-info wheels && git init -q && " + git +
                "add -A && " + git + "commit -q -m embeddings && /usr/bin/python3 embed.py --inputs data/inputs.csv " +
                "--weights weights.pt --out out && cp -r out expected && cp -r " + proj + " " + base + "/src && " +
                "cd " + base + "/src && PIP_CONFIG_FILE=/dev/null /usr/bin/python3 -m pip wheel -q --no-deps " +
                "--no-build-isolation --no-index -w " + base + "/wheels .")
                .code,
            0);
  RunResult init = run("cd " + proj + " && " + K +
                       " reference init --repo . --entry-point 'python embed.py --inputs data/inputs.csv --weights "
                       "weights.pt --out out' --outputs out --data inputs=data/inputs.csv --weights encoder=weights.pt "
                       "--requirements requirements.txt --python /usr/bin/python3 --expected expected --ids ids.txt "
                       "--criterion 'abs<=1e-6' --why 'float32 on one CPU thread' --host-root /nonexistent "
                       "-o reference.json");
  ASSERT_EQ(init.code, 0) << init.err;
  RunResult build =
      run(K + " dossier build " + d + " --reference " + proj + "/reference.json --wheels " + base + "/wheels");
  ASSERT_EQ(build.code, 3) << build.err << build.out;  // written; no check report, so its verdict is incomplete
  const std::string whl = "embeddings_example-1.0-py3-none-any.whl";
  std::string lock = readFile(d + "/pylock.toml");
  EXPECT_NE(lock.find("name = \"embeddings_example\""), std::string::npos) << lock;
  EXPECT_NE(lock.find("sha256 = \"" + kernodeck::util::sha256Hex(readFile(base + "/wheels/" + whl)) + "\""),
            std::string::npos)
      << lock;
  EXPECT_NE(readFile(d + "/MANIFEST.sha256").find("  wheels/" + whl + "\n"), std::string::npos);

  RunResult replay = run(K + " dossier replay --run --json --work " + base + "/fresh " + d);
  json rj = json::parse(replay.out, nullptr, false);
  ASSERT_TRUE(rj.is_object()) << replay.err;
  EXPECT_EQ(replay.code, 0) << replay.err << rj.dump(1);
  EXPECT_NE(replay.err.find("--require-hashes"), std::string::npos) << replay.err;
  EXPECT_EQ(countFindings(rj, "replay.inventory.matches"), 1) << rj.dump(1);
  EXPECT_EQ(countFindings(rj, "replay.matches"), 1) << rj.dump(1);
  EXPECT_NE(run("ls " + base + "/fresh/venv/lib/python3*/site-packages/").out.find("embeddings_example-1.0.dist-info"),
            std::string::npos);

  // One byte of the wheel changed, the manifest rewritten to match: the replay stops at environment, naming it.
  std::string bytes = readFile(d + "/wheels/" + whl);
  bytes[bytes.size() / 2] ^= 1;
  writeFile(d + "/wheels/" + whl, bytes);
  std::string m;
  for (const auto& line : kernodeck::util::split(readFile(d + "/MANIFEST.sha256"), '\n'))
    if (!line.empty())
      m += (line.ends_with("  wheels/" + whl) ? kernodeck::util::sha256Hex(bytes) + "  wheels/" + whl : line) + "\n";
  writeFile(d + "/MANIFEST.sha256", m);
  RunResult bad = run(K + " dossier replay --run --json --work " + base + "/fresh-bad " + d);
  json bj = json::parse(bad.out, nullptr, false);
  ASSERT_TRUE(bj.is_object()) << bad.err;
  EXPECT_EQ(bad.code, 3);
  EXPECT_EQ(stepStatus(bj, "environment"), "failed") << bj.dump(1);
  EXPECT_NE(stepError(bj, "environment").find("wheel '" + whl + "' (pylock.toml) does not have the lock's hash"),
            std::string::npos)
      << bj.dump(1);
  EXPECT_EQ(stepStatus(bj, "run"), "not_reached");
}

}  // namespace integration_record_replay_test
