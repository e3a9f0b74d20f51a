// An OCI distribution client over libcurl: /v2/ ping, manifests with the
// Accept list for OCI and Docker types, blobs (redirects followed), Bearer
// and Basic auth, bounded retries with backoff (429, 5xx, dropped
// connections; Retry-After honoured), Range resume of interrupted blobs,
// connect and stall timeouts, and a content-addressed blob cache written
// atomically and verified on read. Every error is one line naming the
// registry, repository, digest or tag, and HTTP status. The HTTP exchange itself is behind
// HttpTransport (transport.h); client.cc holds the request loop, blob_stream.cc the blob
// stream and cache, registry_source.cc the ImageSource.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/registry/auth.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/transport.h"

namespace kernodeck::registry {

struct ClientOptions {
  bool insecure = false;  // plain HTTP and no TLS verification for any registry
  std::string certDir;    // extra CA certificates (*.crt) for TLS
  std::string cacheDir;   // empty: defaultCacheDir()
  bool noCache = false;
  int retries = 4;              // attempts after the first
  double retryMaxSeconds = 60;  // total time spent waiting to retry, per request
  long connectTimeoutS = 10;
  long stallTimeoutS = 30;  // abort a transfer that moves no byte for this long
  // The command's overall deadline (--timeout): no request starts after it, a transfer in flight
  // is cut at it and no retry waits past it; the step then fails naming the registry, the step
  // and the deadline (exit 3). Unset: none (every command that talks to a registry sets one,
  // setTimeout).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::string deadlineText;  // how errors name it: "30s (--timeout)"
  bool progress = false;     // per-layer bytes on stderr
  AuthSources auth;
};

// Sets `o`'s deadline `seconds` from now, named `flag` in errors ("--timeout").
void setTimeout(ClientOptions& o, int64_t seconds, const std::string& flag = "--timeout");
// Milliseconds left before `o`'s deadline (0 when passed); nullopt when it has none.
std::optional<int64_t> timeLeftMs(const ClientOptions& o);

// $XDG_CACHE_HOME/kernodeck, else $HOME/.cache/kernodeck (absolute values only); empty when
// neither is set: there is no shared fallback such as /tmp, where anyone could plant entries.
std::string defaultCacheDir();
// The local cache directory `opts` name: "" with noCache, else cacheDir or defaultCacheDir(),
// checked by util::openPrivateDir (the user's own, mode 0700; created so) each time it is
// opened. Invalid when neither is there; Unsafe, naming the directory, when it is not private.
Result<std::string> openCacheDir(const ClientOptions& opts);

struct Manifest {
  std::string bytes, mediaType;
  oci::Digest digest;
};

// What a manifest push left: the digest of the bytes sent, and the OCI-Subject header a
// registry with the referrers API answers when it indexed the manifest's subject itself.
struct PushedManifest {
  oci::Digest digest;
  std::string subjectHeader;
};

// What the referrers API answered: its pages (image indexes) as read; `filtered` when a page said
// OCI-Filters-Applied (the caller filters anyway); `truncated` when more pages or more bytes were
// listed than the bounds, and the rest was not read.
struct ReferrersAnswer {
  std::vector<std::string> pages;
  bool filtered = false;
  bool truncated = false;
};
struct ReferrersBounds {
  size_t maxPages = 64;
  uint64_t maxBytes = 16u << 20;  // all pages together
};

class Client {
 public:
  // `transport` carries every exchange; null: libcurl (makeCurlTransport). Tests hand in a
  // scripted one to drive the retry and auth logic without a registry.
  Client(Reference ref, ClientOptions opts, std::unique_ptr<HttpTransport> transport = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // GET /v2/<repo>/manifests/<tag|digest>; verifies size cap (`maxBytes`), digest, Content-Type.
  Result<Manifest> manifest(const std::string& tagOrDigest, uint64_t maxBytes = oci::kMaxManifestBytes);
  // Streams a blob (from the cache when present and valid); the stream fails at its
  // end when the bytes do not hash to the digest, and only then is nothing cached.
  Result<std::unique_ptr<oci::ByteStream>> blob(const oci::Descriptor& d);

  // Reads a small blob whole (verified like blob()), refusing one larger than `limit`.
  Result<std::string> smallBlob(const oci::Descriptor& d, uint64_t limit);

  // Pushing (distribution spec "push"): HEAD a blob; upload a small blob monolithically (POST,
  // then PUT ?digest=) unless the registry has it already; PUT a manifest by tag or digest.
  Result<bool> hasBlob(const oci::Digest& d);
  Result<oci::Digest> pushBlob(std::string_view bytes);
  Result<PushedManifest> putManifest(const std::string& tagOrDigest, const std::string& bytes,
                                     const std::string& mediaType);

  // GET /v2/<repo>/referrers/<digest>?artifactType=<percent-encoded>: the image indexes of
  // referrers, every page (`Link: <...>; rel="next"`, resolved as RFC 3986 says, on the registry's
  // own origin) up to the bounds; nullopt when the registry has no referrers API (404, or not an
  // index), in which case the spec's fallback tag `sha256-<hex>` holds it.
  Result<std::optional<ReferrersAnswer>> referrers(const oci::Digest& subject, const std::string& artifactType = "",
                                                   const ReferrersBounds& bounds = {});
  // The repository's tags and the registry's repositories (`_catalog`), all pages.
  Result<std::vector<std::string>> tags();
  Result<std::vector<std::string>> catalog();

  const Reference& reference() const { return ref_; }
  std::string scheme() const;

  struct Impl;

 private:
  Result<std::vector<std::string>> listPaged(const std::string& first, const std::string& key,
                                             const std::string& scope);

  Reference ref_;
  std::unique_ptr<Impl> impl_;
};

// The image source for registry references.
Result<std::unique_ptr<oci::ImageSource>> openRegistrySource(const Reference& ref, const ClientOptions& opts);

}  // namespace kernodeck::registry
