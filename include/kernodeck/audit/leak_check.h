// Credentials and build-machine paths an image carries: install URLs with a credential
// (direct_url.json), installs from a build machine's path, credentials in pip.conf and .netrc
// (root's, /etc's, each home's), and image labels holding one. Values are never reported.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

// Adds secret.leak and python.path.leak findings for the image seen through `view`, its Python
// environments `envs` and its config's `labels`.
void checkLeaks(const oci::FsView& view, const std::vector<python::PythonEnv>& envs,
                const std::map<std::string, std::string>& labels, report::Report& r);

}  // namespace kernodeck::audit
