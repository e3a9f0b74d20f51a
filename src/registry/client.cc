// See client.h. The client's request loop (auth, retries with backoff, the TLS fallback) over
// an HttpTransport (transport.h), and the manifest, push, referrers and listing calls; blobs are
// in blob_stream.cc and the image source in registry_source.cc.
#include "kernodeck/registry/client.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>

#include "client_impl.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/private_dir.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/time.h"

namespace kernodeck::registry {

using nlohmann::json;

std::string defaultCacheDir() {
  // The XDG base directory spec: a relative value is invalid and ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/kernodeck";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/kernodeck";
  return {};  // never a shared /tmp path: anyone could plant entries there
}

void setTimeout(ClientOptions& o, int64_t seconds, const std::string& flag) {
  o.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  o.deadlineText = util::formatDurationSeconds(seconds) + " (" + flag + ")";
}

std::optional<int64_t> timeLeftMs(const ClientOptions& o) {
  if (!o.deadline) return std::nullopt;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*o.deadline - std::chrono::steady_clock::now());
  return std::max<int64_t>(0, left.count());
}

Result<std::string> openCacheDir(const ClientOptions& o) {
  if (o.noCache) return std::string();
  std::string dir = o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir;
  if (dir.empty())
    return Error::Invalid(
        "no cache directory: neither $XDG_CACHE_HOME nor $HOME is set; give --cache-dir DIR (a directory of your own, "
        "mode 0700) or --no-cache");
  KDK_TRY_STATUS(util::openPrivateDir(dir, "cache directory"));
  return dir;
}

namespace {

const char* kAccept =
    "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json";

// A TLS-only registry answers a plain HTTP request with 400 and says why (Go's net/http:
// "Client sent an HTTP request to an HTTPS server."; nginx: "The plain HTTP request was sent
// to HTTPS port").
bool speaksOnlyTls(const HttpResponse& r) {
  return r.status == 400 && (r.body.find("HTTP request to an HTTPS server") != std::string::npos ||
                             r.body.find("plain HTTP request was sent to HTTPS port") != std::string::npos);
}

// ERR with a hint when an HTTPS request was answered in plain HTTP (OpenSSL: "wrong version
// number", "packet length too long"): a registry that speaks only HTTP, which --insecure reaches.
std::string withPlainHttpHint(std::string err, const std::string& base) {
  if (base.rfind("https://", 0) == 0 && (err.find("wrong version number") != std::string::npos ||
                                         err.find("packet length too long") != std::string::npos))
    err += " (the registry answers plain HTTP, not HTTPS: use --insecure for a registry without TLS)";
  return err;
}

bool retryable(const HttpResponse& r) {
  return (!r.transportError.empty() && !r.aborted) || r.status == 429 || r.status >= 500;
}

// Retry-After when the registry sends it (at most an hour), else 0.25 s doubling up to 5 s.
double retryDelay(const HttpResponse& r, int attempt) {
  auto it = r.headers.find("retry-after");
  if (it != r.headers.end())
    if (auto s = util::parseUint(it->second)) return static_cast<double>(std::min<uint64_t>(*s, 3600));
  return std::min(5.0, 0.25 * static_cast<double>(1u << std::min(attempt, 5)));
}

}  // namespace

Client::Impl::Impl(Reference r, ClientOptions opts, std::unique_ptr<HttpTransport> t)
    : ref(std::move(r)), o(std::move(opts)), transport(t ? std::move(t) : makeCurlTransport(o)) {
  bool plain = o.insecure || isLoopback(ref.registry);
  base = std::string(plain ? "http" : "https") + "://" + ref.apiHost();
}

std::string Client::Impl::baseUrl() {
  std::lock_guard<std::mutex> l(m);
  return base;
}

bool Client::Impl::switchToHttps() {
  std::lock_guard<std::mutex> l(m);
  if (base.rfind("http://", 0) != 0) return false;
  base = "https://" + ref.apiHost();
  return true;
}

HttpResponse Client::Impl::perform(const std::string& url, std::vector<std::string> headers, uint64_t rangeFrom,
                                   const std::function<bool(const char*, size_t)>& sink, size_t cap,
                                   const std::string& postBody, const std::string& method) {
  if (timeLeftMs(o) == 0) {  // no exchange starts past the deadline
    HttpResponse late;
    late.transportError = "the deadline passed";
    late.pastDeadline = true;
    return late;
  }
  HttpRequest q;
  q.url = url;
  q.headers = std::move(headers);
  q.rangeFrom = rangeFrom;
  q.method = method;
  q.body = postBody;
  q.errorCap = cap;
  q.sink = sink;
  return transport->perform(q);
}

std::string Client::Impl::credsHeaderBasic() {
  if (!credsLoaded) {
    creds = lookupCredentials(o.auth, ref.registry);
    credsLoaded = true;
  }
  if (!creds || creds->username.empty()) return {};
  return "Authorization: Basic " + util::base64Encode(creds->username + ":" + creds->password);
}

Result<std::string> Client::Impl::authorize(const HttpResponse& r, const std::string& scope) {
  auto it = r.headers.find("www-authenticate");
  if (it == r.headers.end()) return Error::Auth(where("") + ": HTTP 401 without a WWW-Authenticate challenge");
  for (const auto& ch : parseWwwAuthenticate(it->second)) {
    if (ch.scheme == "basic") {
      std::string h = credsHeaderBasic();
      if (h.empty())
        return Error::Auth(where("") + ": HTTP 401, the registry wants credentials and none are configured for " +
                           ref.registry);
      return h;
    }
    if (ch.scheme != "bearer") continue;
    auto realm = ch.params.find("realm");
    if (realm == ch.params.end()) return Error::Auth(where("") + ": Bearer challenge without a realm");
    std::string url = realm->second;
    if (url.rfind("https://", 0) != 0 && !(url.rfind("http://", 0) == 0 && (o.insecure || isLoopback(ref.registry))))
      return Error::Auth(where("") + ": refusing token realm over plain HTTP");
    std::string service = ch.params.count("service") ? ch.params.at("service") : "";
    std::string sc = ch.params.count("scope") ? ch.params.at("scope") : scope;
    credsHeaderBasic();
    auto enc = urlEscape;
    HttpResponse tr;
    std::function<bool(const char*, size_t)> none;
    if (creds && !creds->identityToken.empty()) {
      std::string body = "grant_type=refresh_token&client_id=kernodeck&service=" + enc(service) + "&scope=" + enc(sc) +
                         "&refresh_token=" + enc(creds->identityToken);
      tr = perform(url, {"Content-Type: application/x-www-form-urlencoded"}, 0, none, 1 << 20, body);
    } else {
      // The realm may carry a query of its own: the pairs are added to it (curl_url).
      auto withService = appendQuery(url, "service=" + enc(service));
      auto q = withService.ok() ? appendQuery(*withService, "scope=" + enc(sc)) : withService;
      if (!q.ok())
        return Error::Auth(where("") + ": token realm " + report::redactText(url) + ": " + q.error().message);
      std::vector<std::string> hs;
      if (std::string b = credsHeaderBasic(); !b.empty()) hs.push_back(b);
      tr = perform(*q, hs, 0, none, 1 << 20);
    }
    if (!tr.transportError.empty() || tr.status != 200)
      return Error::Auth(where("") + ": token request to " + report::redactText(url) + " failed: " +
                         (tr.transportError.empty() ? "HTTP " + std::to_string(tr.status) : tr.transportError));
    auto j = util::parseUntrustedJson(tr.body);
    std::string token = j.is_object() ? j.value("token", j.value("access_token", std::string())) : "";
    if (token.empty()) return Error::Auth(where("") + ": the token service answered without a token");
    return "Authorization: Bearer " + token;
  }
  return Error::Auth(where("") + ": unsupported authentication challenge");
}

HttpResponse Client::Impl::request(const std::string& path, std::vector<std::string> headers, uint64_t& rangeFrom,
                                   const std::function<bool(const char*, size_t)>& sink, size_t cap, std::string& error,
                                   const std::function<void()>& beforeRetry, const Send& send) {
  std::string scope =
      !send.scope.empty()
          ? send.scope
          : "repository:" + ref.repository + (send.method == "POST" || send.method == "PUT" ? ":pull,push" : ":pull");
  double waited = 0;
  bool reauthed = false;
  HttpResponse r;
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> hs = headers;
    bool absolute = path.rfind("http://", 0) == 0 || path.rfind("https://", 0) == 0;
    std::string url = absolute ? path : baseUrl() + path;
    bool ownOrigin = url.rfind(baseUrl() + "/", 0) == 0;
    if (ownOrigin) {
      std::lock_guard<std::mutex> l(m);
      if (auto it = authHeaders.find(scope); it != authHeaders.end()) hs.push_back(it->second);
    }
    r = perform(url, hs, rangeFrom, sink, cap, send.body, send.method);
    if (speaksOnlyTls(r) && switchToHttps()) {
      --attempt;
      continue;
    }
    if (r.status == 401 && !reauthed && ownOrigin) {
      reauthed = true;
      std::lock_guard<std::mutex> l(m);
      auto h = authorize(r, scope);
      if (!h.ok()) {
        error = h.error().message;
        return r;
      }
      authHeaders[scope] = *h;
      --attempt;
      continue;
    }
    if (r.pastDeadline || !retryable(r) || attempt >= o.retries) break;
    double d = retryDelay(r, attempt);
    if (waited + d > o.retryMaxSeconds) break;
    if (auto left = timeLeftMs(o); left && static_cast<double>(*left) < d * 1000) {
      r.pastDeadline = true;  // the wait would end past the deadline: no retry
      break;
    }
    transport->sleepFor(d);
    waited += d;
    if (beforeRetry) beforeRetry();
  }
  if (r.pastDeadline) {
    error = "the overall deadline of " + (o.deadlineText.empty() ? std::string("the command") : o.deadlineText) +
            " passed" + (r.transportError.empty() ? std::string() : " (last: " + r.transportError + ")") +
            "; give a longer --timeout for a slow registry";
  } else if (!r.transportError.empty()) {
    error = "cannot reach " + baseUrl() + ": " + r.transportError;
    if (r.transportError.find("certificate") != std::string::npos && !o.insecure)
      error += " (trust its CA with --cert-dir DIR, or skip verification with --tls-verify=false)";
  } else if (r.status == 401 || r.status == 403)
    error = "access denied (HTTP " + std::to_string(r.status) + ")";
  else if (r.status == 404)
    error = "not found (HTTP 404)";
  else if (r.status < 200 || r.status >= 300)
    error = "HTTP " + std::to_string(r.status) + (r.aborted ? " (response too large)" : "");
  return r;
}

Client::Client(Reference ref, ClientOptions opts, std::unique_ptr<HttpTransport> transport)
    : ref_(ref), impl_(std::make_unique<Impl>(std::move(ref), std::move(opts), std::move(transport))) {}
Client::~Client() = default;
std::string Client::scheme() const {
  std::string b = impl_->baseUrl();
  return b.substr(0, b.find(':'));
}

Result<Manifest> Client::manifest(const std::string& tagOrDigest, uint64_t maxBytes) {
  std::string body;
  bool tooLarge = false;
  std::function<bool(const char*, size_t)> sink = [&](const char* p, size_t n) {
    if (body.size() + n > maxBytes) {
      tooLarge = true;
      return false;
    }
    body.append(p, n);
    return true;
  };
  std::string err;
  uint64_t from = 0;
  HttpResponse r = impl_->request("/v2/" + ref_.repository + "/manifests/" + tagOrDigest, {kAccept}, from, sink, 65536,
                                  err, [&] { body.clear(); });
  std::string what = "manifest " + tagOrDigest;
  if (tooLarge) return Error::Invalid(impl_->where(what) + ": larger than " + util::humanBytes(maxBytes));
  if (r.status == 404) return Error::NotFound(impl_->where(what) + ": " + err);
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + withPlainHttpHint(err, impl_->baseUrl()));
  Manifest m;
  m.bytes = body;
  m.digest = oci::Digest{"sha256", util::sha256Hex(body)};
  auto dcd = r.headers.find("docker-content-digest");
  if (dcd != r.headers.end()) {
    auto d = oci::parseDigest(dcd->second);
    if (d.ok() && d->algorithm == "sha256" && d->encoded != m.digest.encoded)
      return Error::Corrupt(impl_->where(what) + ": Docker-Content-Digest " + d->str() + " does not match the bytes (" +
                            m.digest.str() + ")");
  }
  if (auto want = oci::parseDigest(tagOrDigest); want.ok() && !(*want == m.digest))
    return Error::Corrupt(impl_->where(what) + ": the bytes hash to " + m.digest.str());
  auto j = util::parseUntrustedJson(body);
  if (!j.is_object())
    return Error::Corrupt(impl_->where(what) + ": the response is not a JSON manifest (HTTP " +
                          std::to_string(r.status) + ")");
  std::string ct = r.headers.count("content-type") ? r.headers["content-type"] : "";
  ct = std::string(util::trim(ct.substr(0, ct.find(';'))));
  std::string declared = j.value("mediaType", "");
  if (!declared.empty() && !ct.empty() && ct != declared && isManifestType(ct))
    return Error::Corrupt(impl_->where(what) + ": Content-Type " + ct + " disagrees with the manifest's mediaType " +
                          declared);
  m.mediaType = !declared.empty() ? declared : ct;
  return m;
}

// One exchange with the body of a 2xx answer kept whole (at most `cap` bytes).
static HttpResponse exchange(Client::Impl& impl, const std::string& path, std::vector<std::string> headers, size_t cap,
                             std::string& body, std::string& err, const Client::Impl::Send& send = {}) {
  bool tooLarge = false;
  std::function<bool(const char*, size_t)> sink = [&](const char* p, size_t n) {
    if (body.size() + n > cap) {
      tooLarge = true;
      return false;
    }
    body.append(p, n);
    return true;
  };
  uint64_t from = 0;
  HttpResponse r = impl.request(
      path, std::move(headers), from, sink, 65536, err, [&] { body.clear(); }, send);
  if (tooLarge && err.empty()) err = "the answer is larger than " + util::humanBytes(cap);
  return r;
}

Result<bool> Client::hasBlob(const oci::Digest& d) {
  std::string body, err;
  HttpResponse r = exchange(*impl_, "/v2/" + ref_.repository + "/blobs/" + d.str(), {}, 0, body, err, {"HEAD", "", ""});
  if (r.status == 404) return false;
  if (!err.empty()) return Error::Io(impl_->where("blob " + d.str()) + ": " + err);
  return true;
}

Result<oci::Digest> Client::pushBlob(std::string_view bytes) {
  oci::Digest d{"sha256", util::sha256Hex(bytes)};
  KDK_TRY_ASSIGN(bool present, hasBlob(d));
  if (present) return d;
  std::string what = "upload of blob " + d.str();
  std::string body, err;
  std::string start = "/v2/" + ref_.repository + "/blobs/uploads/";
  HttpResponse r = exchange(*impl_, start, {"Content-Length: 0"}, 65536, body, err, {"POST", "", ""});
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
  auto loc = r.headers.find("location");
  if (r.status != 202 || loc == r.headers.end() || loc->second.empty())
    return Error::Io(impl_->where(what) + ": the registry answered HTTP " + std::to_string(r.status) +
                     " without an upload location");
  // The Location is a URL reference resolved against the POST's URL (RFC 3986; the spec allows a
  // relative one), and the digest is added to whatever query it carries.
  auto located = resolveUrl(impl_->baseUrl() + start, loc->second);
  auto url = located.ok() ? appendQuery(*located, "digest=" + urlEscape(d.str())) : located;
  if (!url.ok()) return Error::Io(impl_->where(what) + ": upload location: " + url.error().message);
  body.clear();
  r = exchange(*impl_, *url, {"Content-Type: application/octet-stream", "Expect:"}, 65536, body, err,
               {"PUT", std::string(bytes), ""});
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
  if (r.status != 201) return Error::Io(impl_->where(what) + ": HTTP " + std::to_string(r.status));
  return d;
}

Result<PushedManifest> Client::putManifest(const std::string& tagOrDigest, const std::string& bytes,
                                           const std::string& mediaType) {
  PushedManifest out;
  out.digest = oci::Digest{"sha256", util::sha256Hex(bytes)};
  std::string what = "push of manifest " + tagOrDigest;
  std::string body, err;
  HttpResponse r = exchange(*impl_, "/v2/" + ref_.repository + "/manifests/" + tagOrDigest,
                            {"Content-Type: " + mediaType, "Expect:"}, 65536, body, err, {"PUT", bytes, ""});
  if (r.status == 400) {
    // The registry refused the document (a referenced blob it does not know, a bad digest):
    // its error code says which.
    auto j = util::parseUntrustedJson(r.body);
    std::string code = j.is_object() && j.contains("errors") && j["errors"].is_array() && !j["errors"].empty() &&
                               j["errors"][0].is_object()
                           ? j["errors"][0].value("code", "")
                           : "";
    return Error::Invalid(impl_->where(what) + ": HTTP 400" + (code.empty() ? "" : " " + util::printable(code, 60)));
  }
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
  if (r.status != 201) return Error::Io(impl_->where(what) + ": HTTP " + std::to_string(r.status));
  if (auto it = r.headers.find("docker-content-digest"); it != r.headers.end() && it->second != out.digest.str())
    return Error::Corrupt(impl_->where(what) + ": the registry stored it as " + it->second + ", not " +
                          out.digest.str());
  if (auto it = r.headers.find("oci-subject"); it != r.headers.end()) out.subjectHeader = it->second;
  return out;
}

namespace {

// The target of the `Link` header's rel="next" link (RFC 8288: `<URL>; rel="next"`, several
// links separated by commas), resolved against `requestUrl`; empty when there is none.
Result<std::string> nextPage(const std::map<std::string, std::string>& headers, const std::string& requestUrl) {
  auto it = headers.find("link");
  if (it == headers.end()) return std::string();
  const std::string& v = it->second;
  for (size_t a = v.find('<'); a != std::string::npos; a = v.find('<', a + 1)) {
    size_t b = v.find('>', a);
    if (b == std::string::npos) break;
    size_t end = v.find('<', b);
    std::string params = v.substr(b + 1, end == std::string::npos ? std::string::npos : end - b - 1);
    std::string lower;
    for (char c : params)
      if (c != ' ' && c != '\t') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("rel=\"next\"") == std::string::npos && lower.find("rel=next") == std::string::npos) continue;
    return resolveUrl(requestUrl, v.substr(a + 1, b - a - 1));
  }
  return std::string();
}

}  // namespace

Result<std::optional<ReferrersAnswer>> Client::referrers(const oci::Digest& subject, const std::string& artifactType,
                                                         const ReferrersBounds& bounds) {
  std::string what = "referrers of " + subject.str();
  std::string path = "/v2/" + ref_.repository + "/referrers/" + subject.str();
  // Percent-encoded: a registry written in Go reads the query with url.ParseQuery, where a raw
  // '+' (application/vnd...+json) is a space.
  if (!artifactType.empty()) path += "?artifactType=" + urlEscape(artifactType);
  ReferrersAnswer out;
  uint64_t total = 0;
  // The first request by path (the client may still move from http to https), the next pages by
  // the absolute URLs their Link headers name.
  std::string url = path;
  for (size_t page = 0; !url.empty(); ++page) {
    if (page >= bounds.maxPages) {
      out.truncated = true;  // more pages than the bound: the caller names it, never a pass
      break;
    }
    std::string body, err;
    uint64_t cap = std::min<uint64_t>(oci::kMaxManifestBytes, bounds.maxBytes - total);
    HttpResponse r = exchange(*impl_, url, {"Accept: application/vnd.oci.image.index.v1+json"}, cap, body, err);
    // The distribution spec: a 404 means the registry has no referrers API; use the fallback tag.
    if (page == 0 && r.status == 404) return std::optional<ReferrersAnswer>();
    if (r.aborted && r.status >= 200 && r.status < 300 && cap < oci::kMaxManifestBytes) {
      out.truncated = true;  // the listing is larger than the bound in all
      break;
    }
    if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
    auto j = util::parseUntrustedJson(body);
    if (!j.is_object() || j.value("mediaType", "") != oci::media::kOciIndex) {
      // Not an image index: a registry that does not implement the API (first page only).
      if (page == 0) return std::optional<ReferrersAnswer>();
      return Error::Corrupt(impl_->where(what) + ": page " + std::to_string(page + 1) + " is not an image index");
    }
    total += body.size();
    out.filtered = out.filtered || r.headers.count("oci-filters-applied");
    out.pages.push_back(std::move(body));
    std::string requestUrl = page == 0 ? impl_->baseUrl() + path : url;
    auto next = nextPage(r.headers, requestUrl);
    if (!next.ok()) return Error::Io(impl_->where(what) + ": the Link header: " + next.error().message);
    // Pages come from the registry's own origin only (credentials go nowhere else).
    std::string origin = urlOrigin(impl_->baseUrl());
    if (!next->empty() && urlOrigin(*next) != origin)
      return Error::Io(impl_->where(what) + ": the next page is on another origin (" +
                       util::printable(urlOrigin(*next), 200) + ")");
    url = *next;
  }
  return std::optional<ReferrersAnswer>(std::move(out));
}

Result<std::vector<std::string>> Client::listPaged(const std::string& first, const std::string& key,
                                                   const std::string& scope) {
  std::vector<std::string> out;
  std::string path = first;  // then the absolute URLs the Link headers name
  for (int page = 0; !path.empty(); ++page) {
    if (page > 10000) return Error::Invalid(impl_->where(first) + ": more than 10000 pages");
    std::string body, err;
    HttpResponse r = exchange(*impl_, path, {"Accept: application/json"}, 16u << 20, body, err, {"", "", scope});
    if (!err.empty()) return Error::Io(impl_->where(first) + ": " + err);
    auto j = util::parseUntrustedJson(body);
    if (!j.is_object() || !(j.contains(key) && (j[key].is_array() || j[key].is_null())))
      return Error::Invalid(impl_->where(first) + ": the answer is not a JSON object with \"" + key + "\"");
    if (j[key].is_array())
      for (const auto& v : j[key])
        if (v.is_string()) out.push_back(v.get<std::string>());
    auto next = nextPage(r.headers, page == 0 ? impl_->baseUrl() + first : path);
    if (!next.ok()) return Error::Io(impl_->where(first) + ": the Link header: " + next.error().message);
    path = *next;
  }
  return out;
}

Result<std::vector<std::string>> Client::tags() {
  return listPaged("/v2/" + ref_.repository + "/tags/list?n=1000", "tags", "");
}

Result<std::vector<std::string>> Client::catalog() {
  return listPaged("/v2/_catalog?n=1000", "repositories", "registry:catalog:*");
}

}  // namespace kernodeck::registry
