// An OCI distribution client over libcurl: /v2/ ping, manifests with the
// Accept list for OCI and Docker types, blobs (redirects followed), Bearer
// and Basic auth, bounded retries with backoff (429, 5xx, dropped
// connections; Retry-After honoured), Range resume of interrupted blobs,
// connect and stall timeouts, and a content-addressed blob cache written
// atomically and verified on read. Every error is one line naming the
// registry, repository, digest or tag, and HTTP status.
#pragma once

#include <memory>
#include <string>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/registry/auth.h"
#include "kernodeck/registry/reference.h"

namespace kernodeck::registry {

struct ClientOptions {
  bool insecure = false;          // plain HTTP and no TLS verification for any registry
  std::string certDir;            // extra CA certificates (*.crt) for TLS
  std::string cacheDir;           // empty: $XDG_CACHE_HOME/kernodeck or ~/.cache/kernodeck
  bool noCache = false;
  int retries = 4;                // attempts after the first
  double retryMaxSeconds = 60;    // total time spent waiting to retry, per request
  long connectTimeoutS = 10;
  long stallTimeoutS = 30;        // abort a transfer that moves no byte for this long
  bool progress = false;          // per-layer bytes on stderr
  AuthSources auth;
};

std::string defaultCacheDir();

struct Manifest {
  std::string bytes, mediaType;
  oci::Digest digest;
};

class Client {
 public:
  Client(Reference ref, ClientOptions opts);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // GET /v2/<repo>/manifests/<tag|digest>; verifies size cap, digest, Content-Type.
  Result<Manifest> manifest(const std::string& tagOrDigest);
  // Streams a blob (from the cache when present and valid); the stream fails at its
  // end when the bytes do not hash to the digest, and only then is nothing cached.
  Result<std::unique_ptr<oci::ByteStream>> blob(const oci::Descriptor& d);

  const Reference& reference() const { return ref_; }
  std::string scheme() const;

  struct Impl;

 private:
  Reference ref_;
  std::unique_ptr<Impl> impl_;
};

// The image source for registry references.
Result<std::unique_ptr<oci::ImageSource>> openRegistrySource(const Reference& ref, const ClientOptions& opts);

}  // namespace kernodeck::registry
