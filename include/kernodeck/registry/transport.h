// The HTTP seam of the registry client: one exchange, no retry, no auth. The client's retry,
// backoff, TLS fallback and auth logic (client.cc) sits above it and talks only to this
// interface, so unit tests drive that logic with a scripted transport and no registry;
// makeCurlTransport is the real one (libcurl, kept-alive connections reused between exchanges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::registry {

struct ClientOptions;

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  uint64_t rangeFrom = 0;            // > 0: ask for the bytes from this offset on (Range)
  std::string method;                // "" GET (POST when body is set), "HEAD", "POST", "PUT"
  std::string body;
  size_t errorCap = 0;  // the most bytes of a non-2xx body kept; past it the exchange is aborted
  // Receives the body of a 2xx answer; returning false stops the transfer (aborted). Empty: the
  // 2xx body is kept like an error body.
  std::function<bool(const char*, size_t)> sink;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; the last response's after redirects
  std::string body;                            // error bodies and small documents
  std::string transportError;                  // why the exchange did not complete, when it did not
  bool aborted = false;                        // the sink or the error cap stopped it
  bool pastDeadline = false;                   // the options' overall deadline passed before or during it
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // One exchange: redirects followed (http and https only), connect and stall timeouts applied.
  virtual HttpResponse perform(const HttpRequest& request) = 0;
  // Waits between two attempts of a request; a test's transport records the delay instead.
  virtual void sleepFor(double seconds);
};

// libcurl with the options' TLS settings (--insecure, --cert-dir's CAs added to the system's)
// and timeouts.
std::unique_ptr<HttpTransport> makeCurlTransport(const ClientOptions& options);

// Percent-encodes every byte but RFC 3986's unreserved characters (libcurl's curl_easy_escape).
std::string urlEscape(const std::string& s);

// `ref` (an upload's Location, a Link page, ...) resolved against the absolute URL `base` as
// RFC 3986 section 5 says (libcurl's URL API, curl_url): "uploads/x" against
// "https://h/v2/r/blobs/uploads/" is "https://h/v2/r/blobs/uploads/uploads/x", "/v2/x" keeps
// the host, an absolute URL replaces it. Invalid, naming `ref`, when libcurl refuses either.
Result<std::string> resolveUrl(const std::string& base, const std::string& ref);
// `url` with `pair` ("key=value", already percent-encoded) added to its query ('?' or '&').
Result<std::string> appendQuery(const std::string& url, const std::string& pair);
// "scheme://host[:port]" of an absolute URL, as libcurl parses it (lower-case scheme and host);
// empty when it cannot be parsed.
std::string urlOrigin(const std::string& url);

}  // namespace kernodeck::registry
