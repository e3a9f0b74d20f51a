// dossier replay --run is sealed: a dossier's requirements cannot make pip download (an
// include at any depth, `name @ URL`, `--find=URL`) or read the caller's PIP_* variables; the
// dossier's code sees none of the caller's environment and cannot reach the host's network.
// Each attack is served by a real HTTP server on the host's loopback, with a source
// distribution whose setup.py and a wheel whose .pth file leave a mark when they run.
#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "support.h"

namespace integration_record_replay_sealed_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kGit = "git -c user.email=t@example.org -c user.name=t ";



// A python http.server on a free loopback port serving `dir`, its request log in `log`.
struct HttpServer {
  int pid = 0, port = 0;
  std::string log;
  bool start(const std::string& base, const std::string& dir) {
    log = base + "/http.log";
    writeFile(base + "/serve.py",
              "import functools, http.server, sys\n"
              "h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n"
              "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), h)\n"
              "open(sys.argv[2] + '.tmp', 'w').write(str(s.server_address[1]))\n"
              "import os; os.rename(sys.argv[2] + '.tmp', sys.argv[2])\n"
              "s.serve_forever()\n");
    RunResult r = run("setsid python3 " + base + "/serve.py " + dir + " " + base + "/port > " + log +
                      " 2>&1 < /dev/null & echo $!");
    pid = std::atoi(r.out.c_str());
    for (int i = 0; i < 100 && !exists(base + "/port"); ++i) ::usleep(50000);
    port = std::atoi(readFile(base + "/port").c_str());
    return pid > 0 && port > 0;
  }
  ~HttpServer() {
    if (pid > 0) ::kill(-pid, SIGTERM);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// Writes a source distribution and a wheel of `evilpkg` into `dir`: setup.py writes MARK-sdist
// when pip builds it; the wheel's .pth file writes MARK-wheel whenever its python starts.
void writeEvilPackages(const std::string& base, const std::string& dir, const std::string& mark) {
  writeFile(
      base + "/mkevil.py",
      "import io, sys, tarfile, zipfile\n"
      "d, mark = sys.argv[1], sys.argv[2]\n"
      "setup = ('open(%r, \"w\").write(\"ran\")\\nfrom setuptools import setup\\n"
      "setup(name=\"evilpkg\", version=\"1.0\")\\n' % (mark + '-sdist'))\n"
      "with tarfile.open(d + '/evilpkg-1.0.tar.gz', 'w:gz') as t:\n"
      "  for name, text in [('evilpkg-1.0/setup.py', setup),\n"
      "                     ('evilpkg-1.0/PKG-INFO', 'Metadata-Version: 2.1\\nName: evilpkg\\nVersion: 1.0\\n')]:\n"
      "    b = text.encode(); i = tarfile.TarInfo(name); i.size = len(b); t.addfile(i, io.BytesIO(b))\n"
      "pth = 'import os; open(%r, \"w\").write(\"ran\")\\n' % (mark + '-wheel')\n"
      "files = {'evilpkg.pth': pth,\n"
      "         'evilpkg-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: evilpkg\\nVersion: 1.0\\n',\n"
      "         'evilpkg-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: "
      "true\\nTag: py3-none-any\\n'}\n"
      "record = ''.join(n + ',,\\n' for n in files) + 'evilpkg-1.0.dist-info/RECORD,,\\n'\n"
      "with zipfile.ZipFile(d + '/evilpkg-1.0-py3-none-any.whl', 'w') as z:\n"
      "  for n, text in files.items(): z.writestr(n, text)\n"
      "  z.writestr('evilpkg-1.0.dist-info/RECORD', record)\n");
  run("mkdir -p " + dir + " && python3 " + base + "/mkevil.py " + dir + " " + mark);
}

// The example project, committed with two requirement files of its own (reqs/extra.txt
// includes reqs/nested.txt, which names evilpkg at the server) and probe.py (an entry point
// that writes what it sees: its environment and whether the host's server answers), recorded
// and built into a dossier at BASE/dossier.
struct Fixture {
  std::string base, proj, dossier, goodRef, goodManifest;
  HttpServer server;
  std::string mark;

  bool make() {
    base = tempDir("sealed");
    proj = base + "/proj", dossier = base + "/dossier", mark = base + "/MARK";
    writeEvilPackages(base, base + "/www", mark);
    writeFile(base + "/www/req.txt", "numpy>=1.24\n");
    if (!server.start(base, base + "/www")) return false;
    writeFile(base + "/www/req.txt", "evilpkg @ " + server.url() + "/evilpkg-1.0.tar.gz\n");
    RunResult r = run("cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + proj + " && cd " + proj +
                      " && rm -rf out venv expected __pycache__ && mkdir reqs");
    if (r.code != 0) return false;
    writeFile(proj + "/reqs/extra.txt", "# the project's extra requirements\n-r nested.txt\n");
    writeFile(proj + "/reqs/nested.txt", "numpy>=1.24\nevilpkg @ " + server.url() + "/evilpkg-1.0.tar.gz\n");
    writeFile(proj + "/probe.py",
              "import os, socket, sys\n"
              "open('env.txt', 'w').write('\\n'.join(k + '=' + v for k, v in sorted(os.environ.items())))\n"
              "try:\n"
              "  socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).close(); net = 'connected'\n"
              "except OSError as e:\n"
              "  net = 'unreachable: ' + str(e)\n"
              "open('net.txt', 'w').write(net)\n");
    r = run(
        "cd " + proj + " && git init -q && " + kGit + "add -A && " + kGit + "commit -q -m p && " +
        "/usr/bin/python3 embed.py --inputs data/inputs.csv --weights weights.pt --out out && cp -r out expected && " +
        K +
        " reference init --repo . --entry-point 'python embed.py --inputs data/inputs.csv --weights weights.pt "
        "--out out' --outputs out --data inputs=data/inputs.csv --weights encoder=weights.pt --requirements "
        "requirements.txt --python /usr/bin/python3 --expected expected --ids ids.txt --criterion 'abs<=1e-6' "
        "--why 'float32 on one CPU thread' --host-root /nonexistent -o reference.json && " +
        K + " dossier build " + dossier + " --reference reference.json");
    // Written and sealed; with no check report its verdict is incomplete (exit 3).
    if (r.code != 3 || !std::filesystem::exists(dossier + "/MANIFEST.sha256")) {
      ADD_FAILURE() << r.err << r.out;
      return false;
    }
    goodRef = readFile(dossier + "/reference.json"), goodManifest = readFile(dossier + "/MANIFEST.sha256");
    return true;
  }

  // The dossier's reference.json with `pointer` set to `value`, and a manifest that matches it:
  // what someone who can write the dossier but holds no key can do.
  void tamper(const std::string& pointer, const json& value) {
    json j = json::parse(goodRef);
    j[json::json_pointer(pointer)] = value;
    std::string text = j.dump(2);
    writeFile(dossier + "/reference.json", text);
    std::string m;
    for (const auto& line : kernodeck::util::split(goodManifest, '\n'))
      if (!line.empty())
        m += (line.ends_with("  reference.json") ? kernodeck::util::sha256Hex(text) + "  reference.json" : line) + "\n";
    writeFile(dossier + "/MANIFEST.sha256", m);
  }
};

}  // namespace

TEST(RecordReplaySealed, RequirementsThatDownloadAreRefusedBeforePipRuns) {
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy: the example project cannot run";
  Fixture f;
  ASSERT_TRUE(f.make());
  struct Case {
    const char* name;
    std::vector<std::string> lines;
    std::string env;   // the caller's environment for the replay
    std::string says;  // in the environment step's error
  } cases[] = {
      {"-r file including a file naming a URL",
       {"numpy>=1.24", "-r project/reqs/extra.txt"},
       "",
       "project/reqs/nested.txt line 2: `evilpkg @ " + f.server.url()},
      {"-r URL", {"-r " + f.server.url() + "/req.txt"}, "", "requirements.txt line 1"},
      {"name @ URL",
       {"numpy>=1.24", "evilpkg @ " + f.server.url() + "/evilpkg-1.0.tar.gz"},
       "",
       "requirements.txt line 2: `evilpkg @ "},
      {"--find=URL", {"--find=" + f.server.url() + "/", "evilpkg"}, "", "requirements.txt line 1: `--find="},
      {"PIP_FIND_LINKS in the caller's environment",
       {"numpy>=1.24", "evilpkg"},
       "PIP_FIND_LINKS=" + f.base + "/www ",
       "No matching distribution found for evilpkg"},
  };
  int n = 0;
  for (const auto& c : cases) {
    f.tamper("/packages/requirements/lines", c.lines);
    std::string work = f.base + "/work" + std::to_string(n++);
    RunResult r = run(c.env + K + " dossier replay --run --json --work " + work + " " + f.dossier);
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << c.name << r.err;
    EXPECT_EQ(r.code, 3) << c.name << r.err;
    EXPECT_EQ(stepStatus(j, "environment"), "failed") << c.name << j.dump(1);
    // Said in the step's error, or by pip itself for a package that is nowhere to be found.
    EXPECT_NE((stepError(j, "environment") + "\n" + r.err).find(c.says), std::string::npos) << c.name << j.dump(1);
    for (const char* s : {"run", "check"}) EXPECT_EQ(stepStatus(j, s), "not_reached") << c.name;
    EXPECT_FALSE(exists(f.mark + "-sdist")) << c.name << ": evilpkg's setup.py ran";
    EXPECT_FALSE(exists(f.mark + "-wheel")) << c.name << ": evilpkg's wheel was installed and ran";
    ::unlink((f.mark + "-sdist").c_str()), ::unlink((f.mark + "-wheel").c_str());
  }
  // No request reached the server: nothing was fetched, not even the -r URL.
  EXPECT_EQ(readFile(f.server.log).find("GET /"), std::string::npos) << readFile(f.server.log);
}

TEST(RecordReplaySealed, TheEntryPointSeesNoSecretAndNoHostNetwork) {
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy: the example project cannot run";
  Fixture f;
  ASSERT_TRUE(f.make());
  f.tamper("/code/entry_point", "python probe.py " + std::to_string(f.server.port));
  // The server answers in the test's own namespace.
  ASSERT_EQ(run("python3 -c \"import socket; socket.create_connection(('127.0.0.1', " + std::to_string(f.server.port) +
                "), timeout=3)\"")
                .code,
            0);
  std::string work = f.base + "/work";
  RunResult r =
      run("KDK_TEST_SECRET=hunter2 https_proxy=http://proxy.invalid:3128 PIP_INDEX_URL=" + f.server.url() + " " + K +
          " dossier replay --run --json --python /usr/bin/python3 --work " + work + " " + f.dossier);
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(stepStatus(j, "run"), "passed") << j.dump(1);
  // Said before it starts: the dossier's code runs, as whom, with or without network.
  EXPECT_NE(r.err.find("--run runs the dossier's code"), std::string::npos) << r.err;
  std::string env = readFile(work + "/project/env.txt"), net = readFile(work + "/project/net.txt");
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << env;
  EXPECT_EQ(env.find("proxy.invalid"), std::string::npos) << env;
  EXPECT_EQ(env.find("PIP_INDEX_URL"), std::string::npos) << env;
  EXPECT_NE(env.find("HOME=" + work + "/home"), std::string::npos) << env;
  EXPECT_NE(env.find("PIP_CONFIG_FILE=/dev/null"), std::string::npos) << env;
  // The network: a namespace with only loopback when the kernel gives one, and the finding says which.
  ASSERT_EQ(countFindings(j, "replay.network"), 1) << j.dump(1);
  std::string said;
  for (const auto& fd : j["findings"])
    if (fd["code"] == "replay.network") said = fd["message"];
  if (run("unshare -n true").code == 0 || run("unshare -rn true").code == 0) {
    EXPECT_NE(said.find("without network"), std::string::npos) << said;
    EXPECT_EQ(net.rfind("unreachable", 0), 0u) << net;
  } else {  // no namespace: the replay refuses to start (NoNetworkNamespaceFailsClosedUnlessAllowed)
    ADD_FAILURE() << "a replay without a network namespace ran: " << said;
  }
}

// Issue 39 section 9: a kernel that refuses every new network namespace (here: a user namespace
// of the test's own whose limits on network and user namespaces are 0, a real refusal as on hosts
// with user namespaces disabled) makes `dossier replay --run` stop before pip with exit 3, one
// line naming why and --allow-network; with --allow-network it runs networked and the report says
// so. The old binary ran pip and the entry point with the host's network and exited 0, its only
// trace an info finding.
TEST(RecordReplaySealed, NoNetworkNamespaceFailsClosedUnlessAllowed) {
  if (run("/usr/bin/python3 -c 'import torch, numpy'").code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy: the example project cannot run";
  const std::string denied =
      "unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_net_namespaces && "
      "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"' ";
  if (run(denied + "unshare -n true").code == 0 || run(denied + "true").code != 0)
    GTEST_SKIP() << "cannot make a user namespace whose kernel refuses network namespaces";
  Fixture f;
  ASSERT_TRUE(f.make());
  f.tamper("/code/entry_point", "python probe.py " + std::to_string(f.server.port));
  std::string work = f.base + "/work-denied";
  RunResult r = run(denied + K + " dossier replay --run --json --python /usr/bin/python3 --work " + work + " " +
                    f.dossier);
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--allow-network"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("network namespace"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(work + "/project/net.txt")) << "the entry point ran: " << readFile(work + "/project/net.txt");

  // Asked for by name: it runs with the host's network, and the report records it.
  std::string work2 = f.base + "/work-allowed";
  RunResult a = run(denied + K + " dossier replay --run --allow-network --json --python /usr/bin/python3 --work " +
                    work2 + " " + f.dossier);
  json j = json::parse(a.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << a.err;
  EXPECT_EQ(stepStatus(j, "run"), "passed") << j.dump(1);
  EXPECT_EQ(readFile(work2 + "/project/net.txt"), "connected");
  std::string said, network;
  for (const auto& fd : j["findings"])
    if (fd["code"] == "replay.network") said = fd["message"], network = fd.value("network", "");
  EXPECT_NE(said.find("--allow-network"), std::string::npos) << said;
  EXPECT_EQ(network, "host") << j.dump(1);
  // Only with --run.
  EXPECT_EQ(run(K + " dossier verify --allow-network " + f.dossier).code, 2);
}

}  // namespace integration_record_replay_sealed_test
