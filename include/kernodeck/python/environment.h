// Python environments in an image or root filesystem, found without running
// anything: interpreters (/usr/bin, /usr/local/bin, /opt/conda), virtual
// environments (pyvenv.cfg, include-system-site-packages), their ordered
// package directories, and the distributions installed there (.dist-info and
// .egg-info, files or directories). Vendored metadata inside packages is never
// taken for an installed distribution: only top-level entries of a package
// directory are read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/python/version.h"

namespace kernodeck::python {

struct Distribution {
  std::string name;     // as written in the metadata
  std::string key;      // PEP 503 normalised
  std::string version;  // as written
  std::optional<Version> parsed;
  std::string location;     // the package directory ("usr/lib/python3/dist-packages")
  std::string metadataDir;  // "usr/lib/python3/dist-packages/pip-23.0.1.dist-info"
  bool eggInfo = false;
  std::string installer;   // INSTALLER
  bool requested = false;  // REQUESTED exists
  std::optional<DirectUrl> directUrl;
  std::string directUrlError;
  std::vector<std::string> requiresDist;
  bool hasRecord = false;  // a RECORD is readable
  // Its rows when given; findEnvironments leaves them unread (all the rows of a big image at once
  // cost ~200 bytes a file): checkRecord and recordHashedPaths then parse the RECORD from the
  // view, one distribution at a time.
  std::vector<RecordRow> record;
  bool hasWheel = false;
  WheelInfo wheel;
  int layer = -1;  // layer that wrote the metadata
  // How it was installed when that decides where its code is: "editable" (PEP 660
  // direct_url.json with dir_info.editable), "egg-link" (setup.py develop), "egg" (a zipped or
  // directory egg), or "" for an ordinary install into `location`.
  std::string form;
  std::string codeLocation;  // where the importable code really lives (no leading '/' when in the image)
};

struct PythonEnv {
  std::string kind;         // "system", "local", "conda", "venv", "target" (pip install --target)
  std::string creator;      // venvs: "uv" when uv made it (pyvenv.cfg has a uv key), else ""
  std::string prefix;       // "usr", "opt/venv"
  std::string interpreter;  // "usr/bin/python3.11", empty when none found
  std::string version;      // "3.11" or a full "3.11.2" when known
  bool fullVersionKnown = false;
  std::vector<std::string> paths;           // package directories, in sys.path order
  std::vector<Distribution> distributions;  // every one found, path order
  // Keys seen more than once in one package directory.
  std::vector<std::pair<std::string, std::string>> duplicates;  // (location, name)
  bool includeSystemSitePackages = false;

  // The distribution Python would import for `key` (first on the path).
  const Distribution* find(const std::string& key) const;
};

// Metadata files the layer walk should keep for this module; returns a size limit (0: none).
uint64_t captureLimit(const std::string& path);

struct DiscoveryOptions {
  // e.g. the image's PYTHON_VERSION env ("3.11.7"), used when it matches.
  std::string pythonVersionHint;
  // Interpreters (PREFIX/bin/pythonX.Y) or environment roots in the view (`--python`): when
  // given, exactly these are audited and nothing is searched.
  std::vector<std::string> targets;
};

struct Discovery {
  std::vector<PythonEnv> envs;
  // Places the bounded search did not enter ("/proc", "N directories deeper than 6 levels"),
  // for the report: an environment there is found only when named with --python.
  std::vector<std::string> notSearched;
  // One sentence per target that is not a Python environment.
  std::vector<std::string> errors;
};

// The system, /usr/local and conda Pythons, then every virtual environment (pyvenv.cfg) and
// conda prefix (conda-meta) found by a bounded breadth-first search of the whole tree (depth
// and directory budget fixed, virtual and package trees skipped); or exactly the targets.
Discovery findEnvironments(const oci::FsView& view, const DiscoveryOptions& options);

// findEnvironments without targets, environments only.
std::vector<PythonEnv> discoverEnvironments(const oci::FsView& view, const std::string& pythonVersionHint = "");

// setuptools' editable finder, scanned by hand (the text is the image's: no regex, linear):
// the module named by a .pth whose text starts `import __editable___NAME_finder;` ("" when it
// does not), and the directory of the first package of a finder module's
// `MAPPING[: ANNOTATION] = {'pkg': 'DIR', ...}` ("" when there is none).
std::string editableFinderImport(std::string_view pthText);
std::string editableFinderMapping(std::string_view finderText);

}  // namespace kernodeck::python
