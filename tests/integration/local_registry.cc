#include "local_registry.h"

#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <random>
#include <sstream>

#include "support.h"

namespace kdktest {

namespace {

bool waitHttp(int port) {
  for (int i = 0; i < 100; ++i) {
    RunResult r = run("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" + std::to_string(port) + "/v2/");
    if (r.out == "200") return true;
    ::usleep(100000);
  }
  return false;
}

}  // namespace

bool LocalRegistry::start(bool inMemory) {
  if (!haveTool("docker-registry") || !haveTool("skopeo") || !haveTool("curl")) return false;
  dir_ = tempDir("localreg");
  logPath_ = dir_ + "/registry.log";
  std::string data = dir_ + "/data";
  char shm[] = "/dev/shm/kdk-localreg-XXXXXX";
  // Only where /dev/shm has room (a container's is often 64 MiB): else on disk, as without.
  struct statvfs fs {};
  if (inMemory && ::statvfs("/dev/shm", &fs) == 0 && fs.f_bavail * fs.f_frsize >= (2ull << 30) && ::mkdtemp(shm))
    data = memoryDir_ = shm;
  // In memory, garbage too: Go collects when the heap reaches 256 MiB, not at every few MiB
  // allocated (with its small heap, docker-registry spends a third of its CPU collecting).
  std::string gc = inMemory ? "GOGC=off GOMEMLIMIT=256MiB " : "";
  std::mt19937 rng(static_cast<unsigned>(::getpid()) * 7919u + static_cast<unsigned>(time(nullptr)));
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (pid_ > 0) ::kill(-pid_, SIGKILL);
    port_ = 20000 + static_cast<int>(rng() % 30000);
    writeFile(dir_ + "/config.yml",
              "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n"
              "    rootdirectory: " +
                  data + "\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:" + std::to_string(port_) +
                  "\n");
    RunResult r = run("setsid sh -c '" + gc + "exec docker-registry serve " + dir_ + "/config.yml > " + logPath_ +
                      " 2>&1' & echo $!");
    pid_ = std::atoi(r.out.c_str());
    if (waitHttp(port_) && run("grep -q 'address already in use' " + logPath_).code != 0) return true;
  }
  return false;
}

LocalRegistry::~LocalRegistry() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  std::error_code ec;
  if (!memoryDir_.empty()) std::filesystem::remove_all(memoryDir_, ec);
}

bool LocalRegistry::push(const std::string& layout, const std::string& tag, const std::string& repoTag) const {
  return run("skopeo copy -q --dest-tls-verify=false oci:" + layout + ":" + tag + " docker://" + host() + "/" + repoTag)
             .code == 0;
}

std::string LocalRegistry::digestOf(const std::string& repoTag) const {
  std::string d =
      run("skopeo inspect --tls-verify=false --format '{{.Digest}}' docker://" + host() + "/" + repoTag).out;
  d.erase(d.find_last_not_of("\n") + 1);
  return d;
}

bool ReferrersFront::start(const LocalRegistry& backend, int pageSize, bool filters) {
  if (!haveTool("python3")) return false;
  dir_ = tempDir("referrers-front");
  RunResult r = run("setsid sh -c 'exec python3 " + std::string(SOURCE_DIR) +
                    "/tests/integration/referrers_front.py --backend " + backend.host() + " --page-size " +
                    std::to_string(pageSize) + (filters ? "" : " --no-filters") + " > " + dir_ + "/port 2> " + dir_ +
                    "/log' & echo $!");
  pid_ = std::atoi(r.out.c_str());
  for (int i = 0; i < 100 && port_ == 0; ++i) {
    port_ = std::atoi(readFile(dir_ + "/port").c_str());
    if (port_ == 0) ::usleep(100000);
  }
  return port_ > 0 && waitHttp(port_);
}

ReferrersFront::~ReferrersFront() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
}

int countRequests(const std::string& logFile, const std::string& method, const std::string& uriPart) {
  std::istringstream in(readFile(logFile));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    // One "response completed" line per request names its method and URI.
    if (line.find("response completed") == std::string::npos) continue;
    if (line.find("http.request.method=" + method) == std::string::npos) continue;
    if (line.find(uriPart) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace kdktest
