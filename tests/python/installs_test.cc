// Installs whose code is not where their metadata is, and environments other tools make: uv
// venvs, `pip install --target` directories, PEP 660 editables (a path .pth and setuptools'
// finder), setup.py develop's .egg-link, zipped and directory eggs. Each is inventoried with
// where its code really lives.
#include <gtest/gtest.h>

#include "../oci/tar_builder.h"
#include "kernodeck/python/environment.h"

namespace python_installs_test {

using namespace kernodeck;
using namespace kernodeck::python;

namespace {

using kdktest::viewOf;

const PythonEnv* envAt(const std::vector<PythonEnv>& envs, const std::string& prefix) {
  for (const auto& e : envs)
    if (e.prefix == prefix) return &e;
  return nullptr;
}

}  // namespace

TEST(PythonInstalls, EachShowsWhereItsCodeLives) {
  const std::string uv = "opt/uv/lib/python3.12/site-packages/";
  const std::string venv = "opt/venv/lib/python3.11/site-packages/";
  auto v = viewOf({
      {"usr/bin/python3.11", 'f', "ELF"},
      {"usr/lib/python3.11/os.py", 'f', "#"},
      // A uv venv: its pyvenv.cfg carries a uv key; uv writes INSTALLER "uv".
      {"opt/uv/pyvenv.cfg", 'f',
       "home = /usr/local/bin\nimplementation = CPython\nuv = 0.4.18\nversion_info = 3.12.5\n"
       "include-system-site-packages = false\n"},
      {uv + "attrs-23.2.0.dist-info/METADATA", 'f', "Name: attrs\nVersion: 23.2.0\n"},
      {uv + "attrs-23.2.0.dist-info/INSTALLER", 'f', "uv"},
      // A venv with a PEP 660 editable in setuptools' finder mode, one with a path .pth
      // (hatchling), an .egg-link, a zipped egg and a directory egg.
      {"opt/venv/pyvenv.cfg", 'f', "home = /usr/bin\nversion = 3.11.2\ninclude-system-site-packages = false\n"},
      {venv + "demo_ed-0.3.dist-info/METADATA", 'f', "Name: demo-ed\nVersion: 0.3\n"},
      {venv + "demo_ed-0.3.dist-info/direct_url.json", 'f',
       R"({"dir_info": {"editable": true}, "url": "file:///src/proj"})"},
      {venv + "__editable__.demo_ed-0.3.pth", 'f',
       "import __editable___demo_ed_0_3_finder; __editable___demo_ed_0_3_finder.install()"},
      {venv + "__editable___demo_ed_0_3_finder.py", 'f',
       "import sys\nMAPPING: dict[str, str] = {'demo_ed': '/src/proj/src/demo_ed'}\n"},
      {venv + "hatch_ed-1.0.dist-info/METADATA", 'f', "Name: hatch-ed\nVersion: 1.0\n"},
      {venv + "hatch_ed-1.0.dist-info/direct_url.json", 'f',
       R"({"dir_info": {"editable": true}, "url": "file:///work/hatch"})"},
      {venv + "_hatch_ed.pth", 'f', "/work/hatch/src\n"},
      {venv + "Legacy.egg-link", 'f', "/srv/legacy\n.\n"},
      {"srv/legacy/Legacy.egg-info/PKG-INFO", 'f', "Name: Legacy\nVersion: 2.1\n"},
      {venv + "zipped-1.5-py3.11.egg", 'f', "PK\x03\x04"},
      {venv + "diregg-0.9-py3.11.egg/EGG-INFO/PKG-INFO", 'f', "Name: diregg\nVersion: 0.9.1\n"},
      // pip install --target /app/deps
      {"app/deps/requests-2.31.0.dist-info/METADATA", 'f', "Name: requests\nVersion: 2.31.0\n"},
      {"app/deps/requests/__init__.py", 'f', "#"},
  });
  auto envs = discoverEnvironments(v);
  const PythonEnv* u = envAt(envs, "opt/uv");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, "venv");
  EXPECT_EQ(u->creator, "uv");
  ASSERT_EQ(u->distributions.size(), 1u);
  EXPECT_EQ(u->distributions[0].installer, "uv");
  const PythonEnv* e = envAt(envs, "opt/venv");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->creator, "");
  struct Want {
    std::string key, version, form, code;
  };
  const Want wants[] = {
      {"demo-ed", "0.3", "editable", "src/proj/src/demo_ed"},
      {"hatch-ed", "1.0", "editable", "work/hatch/src"},
      {"legacy", "2.1", "egg-link", "srv/legacy"},
      {"zipped", "1.5", "egg", venv + "zipped-1.5-py3.11.egg"},
      {"diregg", "0.9.1", "egg", venv + "diregg-0.9-py3.11.egg"},
  };
  for (const auto& w : wants) {
    const Distribution* d = e->find(w.key);
    ASSERT_TRUE(d) << w.key;
    EXPECT_EQ(d->version, w.version) << w.key;
    EXPECT_EQ(d->form, w.form) << w.key;
    EXPECT_EQ(d->codeLocation, w.code) << w.key;
  }
  EXPECT_EQ(e->distributions.size(), std::size(wants));
  const PythonEnv* t = envAt(envs, "app/deps");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "target");
  EXPECT_EQ(t->version, "3.11");  // the image's interpreter
  ASSERT_TRUE(t->find("requests"));
  // Nothing else is taken for a target directory (venvs, the system, the egg's metadata).
  size_t targets = 0;
  for (const auto& x : envs) targets += x.kind == "target";
  EXPECT_EQ(targets, 1u);
}

// RHEL and Fedora keep compiled distributions in /usr/lib64/pythonX.Y/site-packages, ahead of
// the pure ones in /usr/lib: both belong to the system environment.
TEST(PythonInstalls, RhelSystemPythonHasLib64) {
  auto v = viewOf({
      {"usr/bin/python3.9", 'f', "ELF"},
      {"usr/lib/python3.9/site-packages/six-1.15.0.dist-info/METADATA", 'f', "Name: six\nVersion: 1.15.0\n"},
      {"usr/lib64/python3.9/site-packages/PyYAML-5.4.1.dist-info/METADATA", 'f', "Name: PyYAML\nVersion: 5.4.1\n"},
  });
  auto envs = discoverEnvironments(v);
  const PythonEnv* sys = envAt(envs, "usr");
  ASSERT_TRUE(sys);
  ASSERT_TRUE(sys->find("pyyaml"));
  ASSERT_TRUE(sys->find("six"));
  EXPECT_EQ(sys->find("pyyaml")->location, "usr/lib64/python3.9/site-packages");
}

// `conda create -n NAME` environments live under the install root's envs/.
TEST(PythonInstalls, CondaNamedEnvironments) {
  auto v = viewOf({
      {"opt/conda/bin/python3.12", 'f', "ELF"},
      {"opt/conda/lib/python3.12/site-packages/conda-24.1.0.dist-info/METADATA", 'f', "Name: conda\nVersion: 24.1.0\n"},
      {"opt/conda/envs/train/bin/python3.10", 'f', "ELF"},
      {"opt/conda/envs/train/lib/python3.10/site-packages/numpy-1.26.0.dist-info/METADATA", 'f',
       "Name: numpy\nVersion: 1.26.0\n"},
  });
  auto envs = discoverEnvironments(v);
  const PythonEnv* base = envAt(envs, "opt/conda");
  const PythonEnv* train = envAt(envs, "opt/conda/envs/train");
  ASSERT_TRUE(base && train);
  EXPECT_EQ(train->kind, "conda");
  EXPECT_EQ(train->version, "3.10");
  EXPECT_EQ(train->interpreter, "opt/conda/envs/train/bin/python3.10");
  EXPECT_TRUE(train->find("numpy"));
  EXPECT_FALSE(base->find("numpy"));
}

}  // namespace python_installs_test
