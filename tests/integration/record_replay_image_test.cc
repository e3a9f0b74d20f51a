// dossier replay --run --image REF@sha256:...: the example project replayed inside a podman
// image the test makes from Debian packages only (tests/fixtures/podman-replay-image: the
// debootstrap fixture with python3-torch and python3-numpy from this host's apt cache,
// imported with podman import into a private store), the reference's lock judged through the
// image's tree as `audit --lock` judges an image. A tag is refused before anything runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "kernodeck/util/strings.h"
#include "no_host_hooks.h"
#include "support.h"

namespace integration_record_replay_image_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

}  // namespace

TEST(RecordReplayImage, ATagOrAGpuWithoutAnImageIsAUsageError) {
  std::string d = tempDir("replay-image-usage");
  for (const std::string& args : std::vector<std::string>{"--run --image localhost/kernodeck-replay-python:1",
                                                          "--run --image localhost/x@sha256:abc", "--run --gpu",
                                                          "--image localhost/x@sha256:" + std::string(64, 'a')}) {
    RunResult r = run(K + " dossier replay " + d + " " + args);
    EXPECT_EQ(r.code, 2) << args << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << r.err;
  }
  RunResult tag = run(K + " dossier replay " + d + " --run --image localhost/kernodeck-replay-python:1");
  EXPECT_NE(tag.err.find("not named by digest"), std::string::npos) << tag.err;
}

TEST(RecordReplayImage, TheExampleReplaysInsideAnImageNamedByDigest) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (podman image mount, a private rootful store)";
  if (run("podman --version").code != 0) GTEST_SKIP() << "podman is not installed";
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy: the example cannot be recorded here";
  RunResult fx = run("timeout 600 " + std::string(SOURCE_DIR) + "/tests/fixtures/podman-replay-image");
  if (fx.code != 0) GTEST_SKIP() << "the image could not be built from Debian packages on this machine: " << fx.err;
  auto lines = kernodeck::util::split(fx.out, '\n');
  ASSERT_GE(lines.size(), 3u) << fx.out;
  const std::string graph = lines[0], runroot = lines[1], image = lines[2];
  const std::string digest = image.substr(image.find('@') + 1);
  std::string base = tempDir("replay-image"), proj = base + "/proj", d = base + "/dossier";
  writeFile(base + "/storage.conf",
            "[storage]\ndriver = \"overlay\"\ngraphroot = \"" + graph + "\"\nrunroot = \"" + runroot + "\"\n");
  writeFile(base + "/containers.conf",
            "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n[engine]\n" + noHostHooks());
  const std::string env =
      "CONTAINERS_STORAGE_CONF=" + base + "/storage.conf CONTAINERS_CONF=" + base + "/containers.conf ";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  // A lock of the image's torch and numpy at the versions this host's Debian has (the image's
  // are the same packages); no wheel of them is carried, so their files are not compared.
  RunResult versions = run("/usr/bin/python3 -c 'import importlib.metadata as m; print(m.version(\"torch\"), "
                           "m.version(\"numpy\"))'");
  auto v = kernodeck::util::split(std::string(kernodeck::util::trim(versions.out)), ' ');
  ASSERT_EQ(v.size(), 2u) << versions.out << versions.err;
  std::string lock;
  for (size_t i = 0; i < 2; ++i)
    lock += std::string("\n[[packages]]\nname = \"") + (i ? "numpy" : "torch") + "\"\nversion = \"" + v[i] +
            "\"\n\n[[packages.wheels]]\nname = \"" + (i ? "numpy" : "torch") + "-" + v[i] +
            "-py3-none-any.whl\"\nhashes = { sha256 = \"" + std::string(64, 'a') + "\" }\n";
  writeFile(base + "/pylock.toml", "lock-version = \"1.0\"\ncreated-by = \"test\"\n" + lock);
  RunResult made = run(
      "cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + proj + " && cd " + proj +
      " && rm -rf out venv expected __pycache__ && git init -q && " + git + "add -A && " + git +
      "commit -q -m p && /usr/bin/python3 embed.py --inputs data/inputs.csv --weights weights.pt --out out && cp -r " +
      "out expected && " + K +
      " reference init --repo . --entry-point 'python embed.py --inputs data/inputs.csv --weights weights.pt --out "
      "out' --outputs out --data inputs=data/inputs.csv --weights encoder=weights.pt --requirements "
      "requirements.txt --python /usr/bin/python3 --expected expected --ids ids.txt --criterion 'abs<=1e-6' --why "
      "'float32 on one CPU thread' --host-root /nonexistent --lock " + base + "/pylock.toml -o reference.json && " +
      K + " dossier build " + d + " --reference reference.json");
  ASSERT_EQ(made.code, 3) << made.err << made.out;  // sealed; no check report, so incomplete

  std::string work = base + "/work";
  RunResult r =
      run(env + "timeout 600 " + K + " dossier replay --run --json --image " + image + " --work " + work + " " + d);
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(r.code, 0) << r.err << j.dump(1);
  EXPECT_EQ(j["subject"]["image"], image);
  EXPECT_EQ(j["subject"]["manifest_digest"], digest);
  for (const char* s : {"code", "place", "environment", "run", "check"}) EXPECT_EQ(stepStatus(j, s), "passed") << s;
  EXPECT_EQ(countFindings(j, "replay.matches"), 1) << j.dump(1);
  EXPECT_EQ(countFindings(j, "replay.inventory.matches"), 1) << j.dump(1);
  EXPECT_NE(r.err.find("inside " + image), std::string::npos) << r.err;
  // The venv's packages came from the image: its torch is read from the mounted image's tree.
  bool torch = false;
  for (const auto& i : j["environment"]["installed"]) torch |= i["name"] == "torch";
  EXPECT_TRUE(torch) << j["environment"].dump(1);
  // The reference's lock, judged through the image's tree: torch and numpy at their locked
  // versions, and no verdict on the image's other packages (no lock's, not installed in the venv).
  for (const auto& f : j["findings"])
    EXPECT_FALSE(f["code"].get<std::string>().starts_with("python.lock.")) << f.dump(1);
  ASSERT_EQ(j["environment"]["locks"].size(), 1u) << j["environment"].dump(1);
  EXPECT_EQ(j["environment"]["locks"][0]["packages"], 2) << j["environment"].dump(1);
  EXPECT_TRUE(std::filesystem::exists(work + "/project/out")) << r.err;

  // Another digest of the same name is not in the store and cannot be pulled: nothing runs on this host instead.
  std::string other = image.substr(0, image.find('@')) + "@sha256:" + std::string(64, 'b');
  RunResult missing =
      run(env + "timeout 300 " + K + " dossier replay --run --json --image " + other + " --work " + base + "/w2 " + d);
  json mj = json::parse(missing.out, nullptr, false);
  ASSERT_TRUE(mj.is_object()) << missing.err;
  EXPECT_NE(missing.code, 0);
  EXPECT_EQ(stepStatus(mj, "environment"), "failed") << mj.dump(1);
  EXPECT_FALSE(std::filesystem::exists(base + "/w2/venv/bin/python"));
}

}  // namespace integration_record_replay_image_test
