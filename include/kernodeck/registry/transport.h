// The HTTP seam of the registry client: one exchange, no retry, no auth. The client's retry,
// backoff, TLS fallback and auth logic (client.cc) sits above it and talks only to this
// interface, so unit tests drive that logic with a scripted transport and no registry;
// makeCurlTransport is the real one (libcurl, one easy handle per exchange).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace kernodeck::registry
