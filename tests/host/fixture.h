// Test helpers: fake host trees from tests/fixtures/hosts, read through a fixture HostFs, so
// no test needs root to mknod device nodes. (Tests that hand a tree to a real binary or runtime
// materialise it with tests/fixtures/hosts/materialize.)
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernodeck/host/host_facts.h"
#include "kernodeck/host/host_fs.h"

namespace kdktest {

// The fixture tree tests/fixtures/hosts/NAME read as it is: its device nodes come from its
// dev.list, so nothing is created and no root is needed.
inline std::string fixtureDir(const std::string& name) {
  return std::string(SOURCE_DIR) + "/tests/fixtures/hosts/" + name;
}

inline kernodeck::host::HostFacts fixtureFacts(const std::string& dir) {
  auto fs = kernodeck::host::fixtureHostFs(dir);
  if (!fs.ok()) return {};
  return kernodeck::host::readHostFacts(**fs);
}

inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A private copy of a fixture tree (files and dev.list), for tests that change it.
inline std::string fixtureCopy(const std::string& name) {
  char tmpl[] = "/tmp/kdk-hostcopy-XXXXXX";
  if (!mkdtemp(tmpl)) return {};
  std::string dest = std::string(tmpl) + "/" + name;
  std::error_code ec;
  std::filesystem::copy(fixtureDir(name), dest, std::filesystem::copy_options::recursive, ec);
  return ec ? std::string() : dest;
}

}  // namespace kdktest
