// Debian's docker-registry on a loopback port for one test suite: started in its own
// process group on a free port (retried when another test holds it), with its request log
// kept (level info: one line per request, with method and URI) and killed at the end.
#pragma once

#include <string>

namespace kdktest {

class LocalRegistry {
 public:
  // False when docker-registry, skopeo or curl is missing or the registry did not come up.
  // inMemory: its storage in a folder of /dev/shm (tmpfs) when that has 2 GiB free, removed with it:
  // docker-registry syncs every file it writes (blobs, links, upload state), which on a shared
  // disk is most of its CPU and wall time for a suite that pushes thousands of small artifacts;
  // and its garbage collected at 256 MiB of heap (GOMEMLIMIT), not every few MiB allocated.
  bool start(bool inMemory = false);
  ~LocalRegistry();

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }
  const std::string& log() const { return logPath_; }
  // Pushes an OCI layout's TAG to REPO:TAG2 with skopeo; true on success.
  bool push(const std::string& layout, const std::string& tag, const std::string& repoTag) const;
  // The manifest digest of REPO:TAG, as skopeo sees it.
  std::string digestOf(const std::string& repoTag) const;

 private:
  int port_ = 0, pid_ = 0;
  std::string dir_, logPath_, memoryDir_;
};

// tests/integration/referrers_front.py in front of a LocalRegistry: an OCI 1.1 referrers API
// (paged with Link headers, the query read as Go reads it, filters optional), relative upload
// Locations, everything else passed to the registry. Killed at the end.
class ReferrersFront {
 public:
  // False when python3 is missing or the front did not come up.
  bool start(const LocalRegistry& backend, int pageSize = 10, bool filters = true);
  ~ReferrersFront();
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0, pid_ = 0;
  std::string dir_;
};

// Requests in a docker-registry log whose method and URI path contain `needle`
// (e.g. "GET /v2/team/app/blobs/sha256:...").
int countRequests(const std::string& logFile, const std::string& method, const std::string& uriPart);

}  // namespace kdktest
