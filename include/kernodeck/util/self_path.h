// Where this program and its plugins are: from the running binary alone (/proc/self/exe),
// never from the image being judged (a caller may put an environment override first).
#pragma once

#include <string>
#include <vector>

namespace kernodeck::util {

// This program's absolute path; "" when the kernel does not say.
std::string executablePath();

// A plugin's places, in the order they are tried: beside the executable, then ../lib/kernodeck/
// beside it (the `cmake --install` layout). Empty when the executable's path is unknown.
std::vector<std::string> pluginPaths(const std::string& fileName);

}  // namespace kernodeck::util
