// The host's files as host facts are read from them: read a small file, list a directory,
// lstat a node. A seam so that tests describe device nodes in a file (the fixture trees'
// dev.list) instead of creating them with mknod, which needs root.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::host {

// What lstat tells of a path (no link followed).
struct NodeStat {
  bool exists = false;
  bool isChar = false;  // a character device; major and minor are then set
  int major = -1, minor = -1;
};

// What trying to open a device node tells: how a container learns whether its device cgroup lets
// it use the node (EPERM) beyond seeing it.
struct DeviceOpen {
  bool exists = false;  // stat() (links followed) found it
  int error = 0;        // errno of the read-write open when it failed; 0 when it opened
};

class HostFs {
 public:
  virtual ~HostFs() = default;
  // Host paths are absolute ("/proc/devices"); the implementation puts them under its root.
  virtual std::optional<std::string> read(const std::string& path, size_t limit) const = 0;
  virtual std::vector<std::string> list(const std::string& dir) const = 0;  // names, sorted
  virtual NodeStat lstat(const std::string& path) const = 0;
  // Opens a device node read-write and non-blocking, and closes it at once. Only the probe does
  // this, on the container's own /dev; host facts only lstat (opening /dev/nvidia0 without
  // persistence mode can block for seconds).
  virtual DeviceOpen openDevice(const std::string& path) const = 0;
  // The root as reports show it ("/" for the real host).
  virtual std::string root() const = 0;
};

// The files under `root` on this machine ("/" for the host itself).
std::unique_ptr<HostFs> diskHostFs(const std::string& root);

// A fixture tree (tests/fixtures/hosts/NAME): files from disk under `root`, device nodes and
// links from its `dev.list` ("c MAJOR MINOR PATH [denied]", "l TARGET PATH", paths relative to
// the root), which take precedence over anything on disk at the same path. Nothing is created.
// A node opens unless marked "denied" (EPERM, as a device cgroup answers); a link opens as
// the dev.list node it names.
Result<std::unique_ptr<HostFs>> fixtureHostFs(const std::string& root);

}  // namespace kernodeck::host
