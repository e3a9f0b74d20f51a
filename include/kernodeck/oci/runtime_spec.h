// The OCI runtime side: the state a runtime hands a hook on stdin, and the
// parts of a bundle's config.json that matter for GPU access.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::oci {

struct RuntimeState {
  std::string ociVersion, id, status, bundle;
  int64_t pid = 0;
  std::map<std::string, std::string> annotations;
};

// Parses the state JSON (runtime spec "State"); id and bundle are required.
Result<RuntimeState> parseRuntimeState(std::string_view json);

struct LinuxDevice {
  std::string path, type;
  int64_t major = -1, minor = -1;
};

struct ContainerSpec {
  std::string rootPath;  // absolute: a relative root.path is resolved against the bundle
  bool rootReadonly = false;
  std::map<std::string, std::string> env;  // process.env, last definition wins
  std::vector<uint32_t> additionalGids;
  std::vector<LinuxDevice> devices;  // linux.devices
  std::map<std::string, std::string> annotations;
  std::vector<std::string> hookPaths;  // every hook of every stage
};

Result<ContainerSpec> parseContainerConfig(std::string_view json, const std::string& bundle);

}  // namespace kernodeck::oci
