// The registry client's shared state and its request loop (client.cc), private to the registry
// module: blob_stream.cc streams blobs through it and registry_source.cc reads manifests with it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/registry/transport.h"

namespace kernodeck::registry {

inline bool isManifestType(const std::string& mt) {
  return mt == oci::media::kOciManifest || mt == oci::media::kOciIndex || mt == oci::media::kDockerManifest ||
         mt == oci::media::kDockerList;
}

struct Client::Impl {
  Reference ref;
  ClientOptions o;
  std::unique_ptr<HttpTransport> transport;
  std::string base;
  std::mutex m;
  std::map<std::string, std::string> authHeaders;  // scope -> "Authorization: ..."
  std::optional<Credentials> creds;
  bool credsLoaded = false;

  Impl(Reference r, ClientOptions opts, std::unique_ptr<HttpTransport> t);

  std::string baseUrl();
  // Plain HTTP is only the first try for loopback and --insecure registries: one that speaks
  // TLS is then reached over https, verified unless --insecure (with --cert-dir's CAs), as
  // skopeo does. False when already on https.
  bool switchToHttps();
  std::string where(const std::string& what) const { return ref.registry + "/" + ref.repository + " " + what; }

  // One exchange, no retry. `sink` receives the body of a 2xx response; other bodies are kept (capped).
  HttpResponse perform(const std::string& url, std::vector<std::string> headers, uint64_t rangeFrom,
                       const std::function<bool(const char*, size_t)>& sink, size_t cap,
                       const std::string& postBody = "", const std::string& method = "");
  std::string credsHeaderBasic();
  // Answers a 401 challenge; returns the Authorization header to use, or an error.
  Result<std::string> authorize(const HttpResponse& r, const std::string& scope);

  // What a request other than a GET sends: its method, body and the scope it needs.
  struct Send {
    std::string method;  // "HEAD", "POST", "PUT"
    std::string body;
    std::string scope;  // empty: pull (push for POST and PUT)
  };

  // A request with auth and bounded retries. `beforeRetry` may adjust the range. `path` may be
  // an absolute URL (an upload's Location); credentials go only to the registry's own origin.
  HttpResponse request(const std::string& path, std::vector<std::string> headers, uint64_t& rangeFrom,
                       const std::function<bool(const char*, size_t)>& sink, size_t cap, std::string& error,
                       const std::function<void()>& beforeRetry = {}, const Send& send = {});
};

}  // namespace kernodeck::registry
