// See host_fs.h.
#include "kernodeck/host/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::host {
namespace {

// Reads at most `limit` bytes. /proc and /sys files report no size, so the buffer grows as the
// data comes: the hook reads these at every container start, and touching a buffer of `limit`
// bytes up front cost more page faults than everything else it does.
std::optional<std::string> readSmall(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::vector<std::string> listDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

NodeStat lstatPath(const std::string& path) {
  NodeStat s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  if (S_ISCHR(st.st_mode)) {
    s.isChar = true;
    s.major = static_cast<int>(::major(st.st_rdev));
    s.minor = static_cast<int>(::minor(st.st_rdev));
  }
  return s;
}

DeviceOpen openPath(const std::string& path) {
  DeviceOpen d;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return d;
  d.exists = true;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    d.error = errno;
  else
    ::close(fd);
  return d;
}

class DiskHostFs : public HostFs {
 public:
  explicit DiskHostFs(std::string root) : shown_(root.empty() ? "/" : root) {
    prefix_ = root == "/" ? "" : root;
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  }
  std::optional<std::string> read(const std::string& path, size_t limit) const override {
    return readSmall(prefix_ + path, limit);
  }
  std::vector<std::string> list(const std::string& dir) const override { return listDir(prefix_ + dir); }
  NodeStat lstat(const std::string& path) const override { return lstatPath(prefix_ + path); }
  DeviceOpen openDevice(const std::string& path) const override { return openPath(prefix_ + path); }
  std::string root() const override { return shown_; }

 protected:
  std::string prefix_, shown_;
};

class FixtureHostFs : public DiskHostFs {
 public:
  FixtureHostFs(std::string root, std::map<std::string, NodeStat> nodes, std::set<std::string> denied,
                std::map<std::string, std::string> links)
      : DiskHostFs(std::move(root)), nodes_(std::move(nodes)), denied_(std::move(denied)), links_(std::move(links)) {}

  std::optional<std::string> read(const std::string& path, size_t limit) const override {
    if (nodes_.count(path)) return std::nullopt;  // a device node or link is never read
    return DiskHostFs::read(path, limit);
  }
  std::vector<std::string> list(const std::string& dir) const override {
    std::vector<std::string> disk = DiskHostFs::list(dir);
    std::set<std::string> names(disk.begin(), disk.end());
    std::string prefix = dir + "/";
    for (const auto& [p, s] : nodes_)
      if (p.starts_with(prefix) && p.find('/', prefix.size()) == std::string::npos)
        names.insert(p.substr(prefix.size()));
    return {names.begin(), names.end()};
  }
  NodeStat lstat(const std::string& path) const override {
    if (auto it = nodes_.find(path); it != nodes_.end()) return it->second;
    return DiskHostFs::lstat(path);
  }
  DeviceOpen openDevice(const std::string& path) const override {
    std::string node = path;
    if (auto l = links_.find(path); l != links_.end()) {
      node = l->second;
      if (!nodes_.count(node) || links_.count(node)) return {};  // dangling, or a chain: not followed
    }
    if (nodes_.count(node)) return {true, denied_.count(node) ? EPERM : 0};
    return DiskHostFs::openDevice(path);
  }

 private:
  std::map<std::string, NodeStat> nodes_;     // absolute host path -> what lstat says
  std::set<std::string> denied_;              // nodes whose open fails with EPERM
  std::map<std::string, std::string> links_;  // absolute link path -> absolute target
};

}  // namespace

std::unique_ptr<HostFs> diskHostFs(const std::string& root) { return std::make_unique<DiskHostFs>(root); }

Result<std::unique_ptr<HostFs>> fixtureHostFs(const std::string& root) {
  auto text = util::readFileLimited(root + "/dev.list", 1 << 20);
  if (!text.ok()) return text.error();
  std::map<std::string, NodeStat> nodes;
  std::set<std::string> denied;
  std::map<std::string, std::string> links;
  int lineNo = 0;
  for (const auto& line : util::split(*text, '\n')) {
    ++lineNo;
    auto f = util::split(util::trim(line), ' ');
    if (f.empty() || f[0].empty()) continue;
    std::string where = root + "/dev.list:" + std::to_string(lineNo);
    if (f[0] == "c" && (f.size() == 4 || (f.size() == 5 && f[4] == "denied"))) {
      auto maj = util::parseUint(f[1]), min = util::parseUint(f[2]);
      if (!maj || !min || *maj > 4095 || *min > (1u << 20)) return Error::Invalid(where + ": bad device numbers");
      nodes["/" + f[3]] = NodeStat{true, true, static_cast<int>(*maj), static_cast<int>(*min)};
      if (f.size() == 5) denied.insert("/" + f[3]);
    } else if (f[0] == "l" && f.size() == 3) {
      nodes["/" + f[2]] = NodeStat{true, false, -1, -1};
      std::filesystem::path link("/" + f[2]);
      links["/" + f[2]] = (link.parent_path() / f[1]).lexically_normal().string();
    } else {
      return Error::Invalid(where + ": expected 'c MAJOR MINOR PATH [denied]' or 'l TARGET PATH'");
    }
  }
  return std::unique_ptr<HostFs>(
      std::make_unique<FixtureHostFs>(root, std::move(nodes), std::move(denied), std::move(links)));
}

}  // namespace kernodeck::host
