// Python environments other than pip-into-a-venv, audited as root filesystems: a conda
// environment (conda-meta records with their sha256, a conda-installed and a pip-installed
// distribution side by side), a uv environment, and an editable install made by the real pip
// (PEP 660, setuptools) inside a chroot. Each: the inventory is complete, a clean tree reports
// nothing above info, and a modified owned file is reported once with its package.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "kernodeck/util/hash.h"
#include "support.h"

namespace integration_python_envs_test {

using nlohmann::json;
using namespace kdktest;

namespace {

std::string sha256Hex(const std::string& s) { return kernodeck::util::sha256Hex(s); }

std::string recordRow(const std::string& path, const std::string& content) {
  kernodeck::util::Hasher h("sha256");
  h.update(content);
  return path + ",sha256=" + kernodeck::util::base64UrlNoPad(h.raw()) + "," + std::to_string(content.size()) + "\n";
}

// Writes files (path -> content) under root and a RECORD listing them, for a dist-info.
void distInfo(const std::string& site, const std::string& name, const std::string& version,
              const std::string& installer, const std::map<std::string, std::string>& files,
              const std::string& requires_ = "") {
  std::string di = name + "-" + version + ".dist-info";
  std::map<std::string, std::string> all = files;
  all[di + "/METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + requires_;
  all[di + "/INSTALLER"] = installer + "\n";
  std::string record;
  for (const auto& [p, c] : all) {
    run("mkdir -p \"$(dirname '" + site + "/" + p + "')\"");
    writeFile(site + "/" + p, c);
    record += recordRow(p, c);
  }
  writeFile(site + "/" + di + "/RECORD", record + di + "/RECORD,,\n");
}

std::vector<json> loud(const json& report) {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["severity"] != "info") out.push_back(f);
  return out;
}

int count(const json& r, const std::string& code, const std::string& path, const json** hit) {
  int n = 0;
  for (const auto& f : r["findings"])
    if (f["code"] == code && f.value("path", "") == path) *hit = &f, ++n;
  return n;
}

const json* envAt(const json& r, const std::string& prefix) {
  for (const auto& e : r["python"]["environments"])
    if (e["prefix"] == prefix) return &e;
  return nullptr;
}

}  // namespace

TEST(PythonEnvs, CondaEnvironmentWithPipInstalls) {
  std::string R = tempDir("conda") + "/root";
  std::string prefix = "opt/conda", site = "lib/python3.11/site-packages";
  std::string P = R + "/" + prefix;
  run("mkdir -p " + P + "/conda-meta " + P + "/bin " + P + "/" + site);
  // conda's records: python (one file rewritten at install for its prefix, with no
  // sha256_in_prefix, so only its presence is checked) and numpy (with its dist-info).
  std::string interp =
                  "\x7f"
                  "ELF python",
              sysconfig = "prefix = '/opt/conda'\n";
  writeFile(P + "/bin/python3.11", interp);
  writeFile(P + "/lib/python3.11/_sysconfigdata.py", sysconfig);
  auto entry = [](const std::string& path, const std::string& content) {
    return json{
        {"_path", path}, {"path_type", "hardlink"}, {"sha256", sha256Hex(content)}, {"size_in_bytes", content.size()}};
  };
  json python = {
      {"name", "python"},
      {"version", "3.11.5"},
      {"build", "h955ad1f_0"},
      {"build_number", 0},
      {"channel", "https://repo.anaconda.com/pkgs/main/linux-64"},
      {"subdir", "linux-64"},
      {"files", {"bin/python3.11", "lib/python3.11/_sysconfigdata.py"}},
      {"paths_data",
       {{"paths_version", 1},
        {"paths",
         {entry("bin/python3.11", interp), json{{"_path", "lib/python3.11/_sysconfigdata.py"},
                                                {"path_type", "hardlink"},
                                                {"sha256", sha256Hex("prefix = '/opt/anaconda1anaconda2anaconda3'\n")},
                                                {"prefix_placeholder", "/opt/anaconda1anaconda2anaconda3"},
                                                {"file_mode", "text"},
                                                {"size_in_bytes", 44}}}}}}};
  writeFile(P + "/conda-meta/python-3.11.5-h955ad1f_0.json", python.dump());
  std::map<std::string, std::string> numpyFiles = {{"numpy/__init__.py", "__version__ = '1.26.0'\n"}};
  distInfo(P + "/" + site, "numpy", "1.26.0", "conda", numpyFiles);
  json paths = json::array();
  json flist = json::array();
  for (const auto& rel :
       {std::string("numpy/__init__.py"), std::string("numpy-1.26.0.dist-info/METADATA"),
        std::string("numpy-1.26.0.dist-info/INSTALLER"), std::string("numpy-1.26.0.dist-info/RECORD")}) {
    std::string content = readFile(P + "/" + site + "/" + rel);
    paths.push_back(entry(site + "/" + rel, content));
    flist.push_back(site + "/" + rel);
  }
  json numpy = {{"name", "numpy"},
                {"version", "1.26.0"},
                {"build", "py311h24aa872_0"},
                {"channel", "https://conda.anaconda.org/conda-forge/linux-64"},
                {"subdir", "linux-64"},
                {"files", flist},
                {"paths_data", {{"paths_version", 1}, {"paths", paths}}}};
  writeFile(P + "/conda-meta/numpy-1.26.0-py311h24aa872_0.json", numpy.dump());
  writeFile(P + "/conda-meta/history", "==> 2024-01-01 <==\n");
  // pip, inside the conda environment, installed a package that needs conda's numpy.
  distInfo(P + "/" + site, "demo-pip", "0.1", "pip", {{"demo_pip/__init__.py", "import numpy\n"}},
           "Requires-Dist: numpy>=1.20\n");
  int code = -1;
  json clean = auditJson("dir:" + R, &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(loud(clean).empty()) << clean["findings"].dump(1);
  ASSERT_TRUE(clean["python"].contains("conda")) << clean["python"].dump(1);
  const json& conda = clean["python"]["conda"][0];
  EXPECT_EQ(conda["prefix"], "/opt/conda");
  EXPECT_EQ(conda["count"], 2);
  std::set<std::string> pkgs;
  for (const auto& p : conda["packages"])
    pkgs.insert(p["name"].get<std::string>() + " " + p["version"].get<std::string>() + " " +
                p["build"].get<std::string>() + " " + p["channel"].get<std::string>());
  EXPECT_EQ(pkgs,
            (std::set<std::string>{"python 3.11.5 h955ad1f_0 https://repo.anaconda.com/pkgs/main/linux-64",
                                   "numpy 1.26.0 py311h24aa872_0 https://conda.anaconda.org/conda-forge/linux-64"}));
  ASSERT_EQ(conda["pip_installed"].size(), 1u) << conda.dump(1);
  EXPECT_EQ(conda["pip_installed"][0]["name"], "demo-pip");
  EXPECT_EQ(conda["files_verified"], 6);  // the placeholder-rewritten file only for presence
  const json* env = envAt(clean, "/opt/conda");
  ASSERT_TRUE(env);
  EXPECT_EQ((*env)["packages"].size(), 2u);  // numpy (conda) and demo-pip (pip), one contract
  // A conda-owned file changed, and pip replaced conda's six with its own.
  writeFile(P + "/" + site + "/numpy/__init__.py", "__version__ = '1.26.0'; evil()\n");
  json six = {{"name", "six"},
              {"version", "1.15.0"},
              {"build", "pyhd3eb1b0_0"},
              {"channel", "https://repo.anaconda.com/pkgs/main/noarch"},
              {"paths_data",
               {{"paths_version", 1},
                {"paths", {entry(site + "/six-1.15.0.dist-info/METADATA", "Name: six\nVersion: 1.15.0\n")}}}}};
  writeFile(P + "/conda-meta/six-1.15.0-pyhd3eb1b0_0.json", six.dump());
  distInfo(P + "/" + site, "six", "1.16.0", "pip", {{"six.py", "# six\n"}});
  json r = auditJson("dir:" + R, &code);
  EXPECT_EQ(code, 1);
  const json* hit = nullptr;
  EXPECT_EQ(count(r, "conda.package.modified", "/" + prefix + "/" + site + "/numpy/__init__.py", &hit), 1)
      << r["findings"].dump(1);
  ASSERT_TRUE(hit);
  EXPECT_EQ((*hit)["package"], "numpy");
  EXPECT_EQ((*hit)["severity"], "error");
  // RECORD defers to conda for what conda installed.
  const json* rec = nullptr;
  EXPECT_EQ(count(r, "python.record.modified", "/" + prefix + "/" + site + "/numpy/__init__.py", &rec), 1);
  ASSERT_TRUE(rec);
  EXPECT_EQ((*rec)["severity"], "info");
  std::set<std::string> codes;
  for (const auto& f : loud(r)) codes.insert(f["code"]);
  EXPECT_EQ(codes,
            (std::set<std::string>{"conda.package.modified", "conda.package.missing_file", "conda.package.shadowed"}))
      << r["findings"].dump(1);
}

TEST(PythonEnvs, UvEnvironment) {
  std::string R = tempDir("uv") + "/root";
  std::string site = R + "/app/.venv/lib/python3.12/site-packages";
  run("mkdir -p " + site + " " + R + "/app/.venv/bin");
  // As `uv venv` writes it, and INSTALLER "uv" as `uv pip install` does.
  writeFile(R + "/app/.venv/pyvenv.cfg",
            "home = /usr/local/bin\nimplementation = CPython\nuv = 0.4.18\nversion_info = 3.12.5\n"
            "include-system-site-packages = false\nprompt = app\n");
  distInfo(site, "attrs", "23.2.0", "uv", {{"attrs/__init__.py", "from attr import *\n"}});
  distInfo(site, "app-client", "1.0", "uv", {{"app_client/__init__.py", "import attrs\n"}},
           "Requires-Dist: attrs>=22\n");
  int code = -1;
  json clean = auditJson("dir:" + R, &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(loud(clean).empty()) << clean["findings"].dump(1);
  const json* env = envAt(clean, "/app/.venv");
  ASSERT_TRUE(env) << clean["python"].dump(1);
  EXPECT_EQ((*env)["creator"], "uv");
  EXPECT_EQ((*env)["python_version"], "3.12.5");
  ASSERT_EQ((*env)["packages"].size(), 2u);
  for (const auto& p : (*env)["packages"]) EXPECT_EQ(p["installer"], "uv");
  EXPECT_EQ((*env)["record_files_checked"], 6);  // each package's module, METADATA and INSTALLER
  writeFile(site + "/attrs/__init__.py", "from attr import *; evil()\n");
  json r = auditJson("dir:" + R, &code);
  EXPECT_EQ(code, 1);
  const json* hit = nullptr;
  EXPECT_EQ(count(r, "python.record.modified", "/app/.venv/lib/python3.12/site-packages/attrs/__init__.py", &hit), 1);
  ASSERT_TRUE(hit);
  EXPECT_EQ((*hit)["package"], "attrs");
  EXPECT_EQ(loud(r).size(), 1u) << r["findings"].dump(1);
}

// The real pip (Debian's, with setuptools' PEP 660 backend) installs a project in editable
// mode into a venv, inside a chroot whose /usr is the host's for the duration, so every path
// pip writes is the image's own.
TEST(PythonEnvs, EditableInstallMadeByPip) {
  if (::geteuid() != 0 || !haveTool("unshare") || !haveTool("chroot") ||
      run("/usr/bin/python3 -c 'import setuptools' && /usr/bin/python3 -c 'import pip'").code != 0)
    GTEST_SKIP() << "needs root, unshare, chroot, python3-pip and python3-setuptools";
  std::string R = tempDir("editable") + "/root";
  run("mkdir -p " + R + "/src/proj/demo_ed " + R + "/tmp");
  writeFile(R + "/src/proj/pyproject.toml",
            "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n"
            "[project]\nname = \"demo-ed\"\nversion = \"0.3\"\n");
  writeFile(R + "/src/proj/demo_ed/__init__.py", "X = 1\n");
  std::string mounts;
  for (const char* d : {"usr", "lib", "lib64", "bin", "etc", "dev"}) {
    if (run(std::string("test -d /") + d).code != 0) continue;
    run("mkdir -p " + R + "/" + d);
    mounts += std::string("mount --rbind /") + d + " " + R + "/" + d + "; ";
  }
  RunResult pip = run("unshare -m sh -c 'set -e; " + mounts + "chroot " + R +
                      " /usr/bin/python3 -m venv --without-pip --system-site-packages /opt/venv; " + "chroot " + R +
                      " /opt/venv/bin/python -m pip install -q --no-index --no-build-isolation -e /src/proj' 2>&1");
  ASSERT_EQ(pip.code, 0) << pip.out;
  // Outside the namespace the mount points are empty again: the tree holds what pip wrote.
  std::string mm = run("/usr/bin/python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").out;
  mm = mm.substr(0, mm.find('\n'));
  int code = -1;
  json clean = auditJson("dir:" + R, &code);
  ASSERT_TRUE(clean.is_object());
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(loud(clean).empty()) << clean["findings"].dump(1);
  const json* env = envAt(clean, "/opt/venv");
  ASSERT_TRUE(env) << clean["python"].dump(1);
  const json* demo = nullptr;
  for (const auto& p : (*env)["packages"])
    if (p["name"] == "demo-ed") demo = &p;
  ASSERT_TRUE(demo) << (*env)["packages"].dump(1);
  EXPECT_EQ((*demo)["version"], "0.3");
  EXPECT_EQ((*demo)["form"], "editable");
  EXPECT_EQ((*demo)["code_location"], "/src/proj/demo_ed");
  EXPECT_EQ((*demo)["direct_url"]["editable"], true);
  // The .pth pip wrote is an owned file of the distribution: changing it is reported once.
  std::string pth = "/opt/venv/lib/python" + mm + "/site-packages/__editable__.demo_ed-0.3.pth";
  writeFile(R + pth, readFile(R + pth) + "\n# tampered\n");
  json r = auditJson("dir:" + R, &code);
  EXPECT_EQ(code, 1);
  const json* hit = nullptr;
  EXPECT_EQ(count(r, "python.record.modified", pth, &hit), 1) << r["findings"].dump(1);
  ASSERT_TRUE(hit);
  EXPECT_EQ((*hit)["package"], "demo-ed");
  EXPECT_EQ(loud(r).size(), 1u) << r["findings"].dump(1);
}

}  // namespace integration_python_envs_test
