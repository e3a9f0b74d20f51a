// See client.h. One curl easy handle per request; blobs stream through a
// bounded queue filled by a transfer thread, so the layer walk consumes bytes
// while they arrive and a layer is never held whole in memory or on disk first.
#include "kernodeck/registry/client.h"

#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/private_dir.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::registry {

using nlohmann::json;

std::string defaultCacheDir() {
  // The XDG base directory spec: a relative value is invalid and ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/kernodeck";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/kernodeck";
  return {};  // never a shared /tmp path: anyone could plant entries there
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

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // error bodies and small documents
  std::string transportError;                  // curl's, when the exchange did not complete
  bool aborted = false;                        // the sink asked to stop
};

bool isManifestType(const std::string& mt) {
  return mt == oci::media::kOciManifest || mt == oci::media::kOciIndex || mt == oci::media::kDockerManifest ||
         mt == oci::media::kDockerList;
}

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

}  // namespace

struct Client::Impl {
  Reference ref;
  ClientOptions o;
  std::string base;
  std::mutex m;
  std::map<std::string, std::string> authHeaders;  // scope -> "Authorization: ..."
  std::optional<Credentials> creds;
  bool credsLoaded = false;
  std::string caBlob;

  Impl(Reference r, ClientOptions opts) : ref(std::move(r)), o(std::move(opts)) {
    static CurlGlobal g;
    bool plain = o.insecure || isLoopback(ref.registry);
    base = std::string(plain ? "http" : "https") + "://" + ref.apiHost();
    if (!o.certDir.empty()) {
      if (auto sys = util::readFileLimited("/etc/ssl/certs/ca-certificates.crt", 8u << 20); sys.ok()) caBlob = *sys;
      if (DIR* d = ::opendir(o.certDir.c_str())) {
        while (struct dirent* e = ::readdir(d)) {
          std::string n = e->d_name;
          if (n.size() > 4 && (n.substr(n.size() - 4) == ".crt" || n.substr(n.size() - 4) == ".pem"))
            if (auto t = util::readFileLimited(o.certDir + "/" + n, 1 << 20); t.ok()) caBlob += "\n" + *t;
        }
        ::closedir(d);
      }
    }
  }

  std::string baseUrl() {
    std::lock_guard<std::mutex> l(m);
    return base;
  }

  // A TLS-only registry answers a plain HTTP request with 400 and says why (Go's net/http:
  // "Client sent an HTTP request to an HTTPS server."; nginx: "The plain HTTP request was sent
  // to HTTPS port").
  static bool speaksOnlyTls(const Response& r) {
    return r.status == 400 && (r.body.find("HTTP request to an HTTPS server") != std::string::npos ||
                               r.body.find("plain HTTP request was sent to HTTPS port") != std::string::npos);
  }

  // Plain HTTP is only the first try for loopback and --insecure registries: one that speaks
  // TLS is then reached over https, verified unless --insecure (with --cert-dir's CAs), as
  // skopeo does. False when already on https.
  bool switchToHttps() {
    std::lock_guard<std::mutex> l(m);
    if (base.rfind("http://", 0) != 0) return false;
    base = "https://" + ref.apiHost();
    return true;
  }

  std::string where(const std::string& what) const { return ref.registry + "/" + ref.repository + " " + what; }

  // One exchange, no retry. `sink` receives the body of a 2xx response; other bodies are kept (capped).
  Response perform(const std::string& url, std::vector<std::string> headers, uint64_t rangeFrom,
                   const std::function<bool(const char*, size_t)>& sink, size_t cap, const std::string& postBody = "",
                   const std::string& method = "") {
    Response r;
    CURL* c = curl_easy_init();
    if (!c) {
      r.transportError = "cannot initialise libcurl";
      return r;
    }
    struct Ctx {
      Response* r;
      CURL* c;
      const std::function<bool(const char*, size_t)>* sink;
      size_t cap;
    } ctx{&r, c, &sink, cap};
    auto onHeader = +[](char* p, size_t size, size_t n, void* ud) -> size_t {
      auto* x = static_cast<Ctx*>(ud);
      std::string line(p, size * n);
      if (line.rfind("HTTP/", 0) == 0) x->r->headers.clear();  // a new response (after a redirect)
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        x->r->headers[util::toLower(util::trim(line.substr(0, colon)))] =
            std::string(util::trim(line.substr(colon + 1)));
      return size * n;
    };
    auto onBody = +[](char* p, size_t size, size_t n, void* ud) -> size_t {
      auto* x = static_cast<Ctx*>(ud);
      size_t len = size * n;
      long status = 0;
      curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 200 && status < 300 && *x->sink) {
        if (!(*x->sink)(p, len)) {
          x->r->aborted = true;
          return 0;
        }
        return len;
      }
      if (x->r->body.size() + len > x->cap) {
        x->r->aborted = true;
        return 0;
      }
      x->r->body.append(p, len);
      return len;
    };
    struct curl_slist* hl = nullptr;
    for (const auto& h : headers) hl = curl_slist_append(hl, h.c_str());
    std::string range;
    if (rangeFrom > 0) range = std::to_string(rangeFrom) + "-";
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &ctx);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o.connectTimeoutS);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o.stallTimeoutS);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "kernodeck/0.1");
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "identity");
    if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
    if (!postBody.empty() || method == "POST" || method == "PUT") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, postBody.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(postBody.size()));
    }
    if (method == "PUT") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (!caBlob.empty()) {
      struct curl_blob blob {};
      blob.data = caBlob.data();
      blob.len = caBlob.size();
      blob.flags = CURL_BLOB_COPY;
      curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (o.insecure) {
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && r.aborted)) r.transportError = curl_easy_strerror(rc);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    return r;
  }

  static bool retryable(const Response& r) {
    return (!r.transportError.empty() && !r.aborted) || r.status == 429 || r.status >= 500;
  }

  double retryDelay(const Response& r, int attempt) const {
    auto it = r.headers.find("retry-after");
    if (it != r.headers.end())
      if (auto s = util::parseUint(it->second)) return static_cast<double>(std::min<uint64_t>(*s, 3600));
    return std::min(5.0, 0.25 * static_cast<double>(1u << std::min(attempt, 5)));
  }

  std::string credsHeaderBasic() {
    if (!credsLoaded) {
      creds = lookupCredentials(o.auth, ref.registry);
      credsLoaded = true;
    }
    if (!creds || creds->username.empty()) return {};
    return "Authorization: Basic " + util::base64Encode(creds->username + ":" + creds->password);
  }

  // Answers a 401 challenge; returns the Authorization header to use, or an error.
  Result<std::string> authorize(const Response& r, const std::string& scope) {
    auto it = r.headers.find("www-authenticate");
    if (it == r.headers.end()) return Error{"auth", where("") + ": HTTP 401 without a WWW-Authenticate challenge"};
    for (const auto& ch : parseWwwAuthenticate(it->second)) {
      if (ch.scheme == "basic") {
        std::string h = credsHeaderBasic();
        if (h.empty())
          return Error{"auth", where("") + ": HTTP 401, the registry wants credentials and none are configured for " +
                                   ref.registry};
        return h;
      }
      if (ch.scheme != "bearer") continue;
      auto realm = ch.params.find("realm");
      if (realm == ch.params.end()) return Error{"auth", where("") + ": Bearer challenge without a realm"};
      std::string url = realm->second;
      if (url.rfind("https://", 0) != 0 && !(url.rfind("http://", 0) == 0 && (o.insecure || isLoopback(ref.registry))))
        return Error{"auth", where("") + ": refusing token realm over plain HTTP"};
      std::string service = ch.params.count("service") ? ch.params.at("service") : "";
      std::string sc = ch.params.count("scope") ? ch.params.at("scope") : scope;
      credsHeaderBasic();
      CURL* esc = curl_easy_init();
      auto enc = [&](const std::string& s) {
        char* e = curl_easy_escape(esc, s.c_str(), static_cast<int>(s.size()));
        std::string out = e ? e : "";
        curl_free(e);
        return out;
      };
      Response tr;
      std::function<bool(const char*, size_t)> none;
      if (creds && !creds->identityToken.empty()) {
        std::string body = "grant_type=refresh_token&client_id=kernodeck&service=" + enc(service) +
                           "&scope=" + enc(sc) + "&refresh_token=" + enc(creds->identityToken);
        tr = perform(url, {"Content-Type: application/x-www-form-urlencoded"}, 0, none, 1 << 20, body);
      } else {
        std::string q =
            url + (url.find('?') == std::string::npos ? "?" : "&") + "service=" + enc(service) + "&scope=" + enc(sc);
        std::vector<std::string> hs;
        if (std::string b = credsHeaderBasic(); !b.empty()) hs.push_back(b);
        tr = perform(q, hs, 0, none, 1 << 20);
      }
      curl_easy_cleanup(esc);
      if (!tr.transportError.empty() || tr.status != 200)
        return Error{"auth", where("") + ": token request to " + report::redactText(url) + " failed: " +
                                 (tr.transportError.empty() ? "HTTP " + std::to_string(tr.status) : tr.transportError)};
      auto j = util::parseUntrustedJson(tr.body);
      std::string token = j.is_object() ? j.value("token", j.value("access_token", std::string())) : "";
      if (token.empty()) return Error{"auth", where("") + ": the token service answered without a token"};
      return "Authorization: Bearer " + token;
    }
    return Error{"auth", where("") + ": unsupported authentication challenge"};
  }

  // What a request other than a GET sends: its method, body and the scope it needs.
  struct Send {
    std::string method;  // "HEAD", "POST", "PUT"
    std::string body;
    std::string scope;  // empty: pull (push for POST and PUT)
  };

  // A request with auth and bounded retries. `beforeRetry` may adjust the range. `path` may be
  // an absolute URL (an upload's Location); credentials go only to the registry's own origin.
  Response request(const std::string& path, std::vector<std::string> headers, uint64_t& rangeFrom,
                   const std::function<bool(const char*, size_t)>& sink, size_t cap, std::string& error,
                   const std::function<void()>& beforeRetry = {}, const Send& send = {}) {
    std::string scope =
        !send.scope.empty()
            ? send.scope
            : "repository:" + ref.repository + (send.method == "POST" || send.method == "PUT" ? ":pull,push" : ":pull");
    double waited = 0;
    bool reauthed = false;
    Response r;
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
      if (!retryable(r) || attempt >= o.retries) break;
      double d = retryDelay(r, attempt);
      if (waited + d > o.retryMaxSeconds) break;
      std::this_thread::sleep_for(std::chrono::duration<double>(d));
      waited += d;
      if (beforeRetry) beforeRetry();
    }
    if (!r.transportError.empty()) {
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
};

Client::Client(Reference ref, ClientOptions opts)
    : ref_(ref), impl_(std::make_unique<Impl>(std::move(ref), std::move(opts))) {}
Client::~Client() = default;
std::string Client::scheme() const {
  std::string b = impl_->baseUrl();
  return b.substr(0, b.find(':'));
}

Result<Manifest> Client::manifest(const std::string& tagOrDigest) {
  std::string body;
  bool tooLarge = false;
  std::function<bool(const char*, size_t)> sink = [&](const char* p, size_t n) {
    if (body.size() + n > oci::kMaxManifestBytes) {
      tooLarge = true;
      return false;
    }
    body.append(p, n);
    return true;
  };
  std::string err;
  uint64_t from = 0;
  Response r = impl_->request("/v2/" + ref_.repository + "/manifests/" + tagOrDigest, {kAccept}, from, sink, 65536, err,
                              [&] { body.clear(); });
  std::string what = "manifest " + tagOrDigest;
  if (tooLarge) return Error::Invalid(impl_->where(what) + ": larger than 4 MiB");
  if (r.status == 404) return Error::NotFound(impl_->where(what) + ": " + err);
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
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
static Response exchange(Client::Impl& impl, const std::string& path, std::vector<std::string> headers, size_t cap,
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
  Response r = impl.request(
      path, std::move(headers), from, sink, 65536, err, [&] { body.clear(); }, send);
  if (tooLarge && err.empty()) err = "the answer is larger than " + util::humanBytes(cap);
  return r;
}

Result<bool> Client::hasBlob(const oci::Digest& d) {
  std::string body, err;
  Response r = exchange(*impl_, "/v2/" + ref_.repository + "/blobs/" + d.str(), {}, 0, body, err, {"HEAD", "", ""});
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
  Response r = exchange(*impl_, "/v2/" + ref_.repository + "/blobs/uploads/", {"Content-Length: 0"}, 65536, body, err,
                        {"POST", "", ""});
  if (!err.empty()) return Error::Io(impl_->where(what) + ": " + err);
  auto loc = r.headers.find("location");
  if (r.status != 202 || loc == r.headers.end() || loc->second.empty())
    return Error::Io(impl_->where(what) + ": the registry answered HTTP " + std::to_string(r.status) +
                     " without an upload location");
  std::string url = loc->second;
  url += (url.find('?') == std::string::npos ? "?" : "&") + std::string("digest=") + d.str();
  body.clear();
  r = exchange(*impl_, url, {"Content-Type: application/octet-stream", "Expect:"}, 65536, body, err,
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
  Response r = exchange(*impl_, "/v2/" + ref_.repository + "/manifests/" + tagOrDigest,
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

Result<std::optional<std::string>> Client::referrers(const oci::Digest& subject, const std::string& artifactType) {
  std::string path = "/v2/" + ref_.repository + "/referrers/" + subject.str();
  if (!artifactType.empty()) path += "?artifactType=" + artifactType;
  std::string body, err;
  Response r =
      exchange(*impl_, path, {"Accept: application/vnd.oci.image.index.v1+json"}, oci::kMaxManifestBytes, body, err);
  // The distribution spec: a 404 means the registry has no referrers API; use the fallback tag.
  if (r.status == 404) return std::optional<std::string>();
  if (!err.empty()) return Error::Io(impl_->where("referrers of " + subject.str()) + ": " + err);
  auto j = util::parseUntrustedJson(body);
  if (!j.is_object() || j.value("mediaType", "") != oci::media::kOciIndex)
    return std::optional<std::string>();  // not an image index: a registry that does not implement the API
  return std::optional<std::string>(body);
}

namespace {

// Follows a `Link: </v2/...?last=x&n=y>; rel="next"` header to the next page.
std::string nextPage(const std::map<std::string, std::string>& headers) {
  auto it = headers.find("link");
  if (it == headers.end()) return {};
  size_t a = it->second.find('<'), b = it->second.find('>');
  if (a == std::string::npos || b == std::string::npos || b < a) return {};
  return it->second.substr(a + 1, b - a - 1);
}

}  // namespace

Result<std::vector<std::string>> Client::listPaged(const std::string& first, const std::string& key,
                                                   const std::string& scope) {
  std::vector<std::string> out;
  std::string path = first;
  for (int page = 0; !path.empty(); ++page) {
    if (page > 10000) return Error::Invalid(impl_->where(first) + ": more than 10000 pages");
    std::string body, err;
    Response r = exchange(*impl_, path, {"Accept: application/json"}, 16u << 20, body, err, {"", "", scope});
    if (!err.empty()) return Error::Io(impl_->where(first) + ": " + err);
    auto j = util::parseUntrustedJson(body);
    if (!j.is_object() || !(j.contains(key) && (j[key].is_array() || j[key].is_null())))
      return Error::Invalid(impl_->where(first) + ": the answer is not a JSON object with \"" + key + "\"");
    if (j[key].is_array())
      for (const auto& v : j[key])
        if (v.is_string()) out.push_back(v.get<std::string>());
    path = nextPage(r.headers);
  }
  return out;
}

Result<std::vector<std::string>> Client::tags() {
  return listPaged("/v2/" + ref_.repository + "/tags/list?n=1000", "tags", "");
}

Result<std::vector<std::string>> Client::catalog() {
  return listPaged("/v2/_catalog?n=1000", "repositories", "registry:catalog:*");
}

Result<std::string> Client::smallBlob(const oci::Descriptor& d, uint64_t limit) {
  if (d.size < 0 || static_cast<uint64_t>(d.size) > limit)
    return Error::Invalid(impl_->where("blob " + d.digest.str()) + ": " + std::to_string(d.size) +
                          " bytes, more than " + util::humanBytes(limit));
  KDK_TRY_ASSIGN(auto stream, blob(d));
  return oci::readAll(*stream, limit, impl_->where("blob " + d.digest.str()));
}

namespace {

// A blob stream fed by a transfer thread through a bounded queue.
class BlobStream : public oci::ByteStream {
 public:
  BlobStream(Client::Impl* impl, oci::Descriptor d, std::string cachePath, std::string tmpDir)
      : impl_(impl), d_(std::move(d)), cachePath_(std::move(cachePath)), tmpDir_(std::move(tmpDir)) {
    t_ = std::thread([this] { produce(); });
  }
  ~BlobStream() override {
    {
      std::lock_guard<std::mutex> l(m_);
      cancel_ = true;
    }
    cv_.notify_all();
    t_.join();
  }

  bool computesDigest(const std::string& algorithm) const override {
    return algorithm == d_.digest.algorithm && util::Hasher(algorithm).valid();
  }
  std::optional<std::string> digestHex() const override {
    std::lock_guard<std::mutex> l(m_);
    if (!done_) return std::nullopt;
    return hex_;
  }

  Result<size_t> read(void* buf, size_t n) override {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !q_.empty() || done_; });
    if (q_.empty()) {
      if (err_) return *err_;
      return size_t(0);
    }
    std::string& front = q_.front();
    size_t k = std::min(n, front.size() - off_);
    std::memcpy(buf, front.data() + off_, k);
    off_ += k;
    if (off_ == front.size()) {
      queued_ -= front.size();
      q_.pop_front();
      off_ = 0;
      cv_.notify_all();
    }
    return k;
  }

 private:
  bool push(std::string chunk) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return queued_ < (8u << 20) || cancel_; });
    if (cancel_) return false;
    queued_ += chunk.size();
    q_.push_back(std::move(chunk));
    cv_.notify_all();
    return true;
  }

  void finish(std::optional<Error> e, std::string hex) {
    std::lock_guard<std::mutex> l(m_);
    err_ = std::move(e);
    hex_ = std::move(hex);
    done_ = true;
    cv_.notify_all();
  }

  void produce() {
    util::Hasher h(d_.digest.algorithm);
    uint64_t got = 0;
    // The cache entry is written to an anonymous O_TMPFILE and linked into place only once
    // its digest checks out: a killed audit leaves neither a torn entry nor a temp file.
    int tmpFd = -1;
    std::string tmpPath;
    if (!cachePath_.empty() && util::makeDirs(tmpDir_)) {
      tmpFd = ::open(tmpDir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
      if (tmpFd < 0) {  // a filesystem without O_TMPFILE: a named temp file
        tmpPath = tmpDir_ + "/blob-XXXXXX";
        tmpFd = ::mkstemp(tmpPath.data());
      }
    }
    bool tooMuch = false;
    std::string batch;
    std::function<bool(const char*, size_t)> sink = [&](const char* p, size_t n) {
      if (d_.size >= 0 && got + n > static_cast<uint64_t>(d_.size)) {
        tooMuch = true;
        return false;
      }
      {
        util::StageTimer t(util::Stage::CompressedDigest);
        h.update(p, n);
      }
      got += n;
      if (tmpFd >= 0 && !util::writeAll(tmpFd, std::string_view(p, n))) {
        ::close(tmpFd);
        if (!tmpPath.empty()) ::unlink(tmpPath.c_str());
        tmpFd = -1;
      }
      if (impl_->o.progress) progress(got);
      // curl delivers 16 KiB at a time: hand the reader 256 KiB chunks, with fewer wake-ups.
      batch.append(p, n);
      if (batch.size() < (256u << 10)) return true;
      bool ok = push(std::move(batch));
      batch.clear();
      return ok;
    };
    std::string err;
    uint64_t from = 0;
    std::string what = "blob " + d_.digest.str();
    // request() retries dropped connections; each retry asks for the rest with Range.
    Response r = impl_->request("/v2/" + impl_->ref.repository + "/blobs/" + d_.digest.str(), {}, from, sink, 65536,
                                err, [&] { from = got; });
    if (!batch.empty()) push(std::move(batch));
    std::optional<Error> failure;
    if (tooMuch)
      failure = Error::Corrupt(impl_->where(what) + ": more bytes than the descriptor's " + std::to_string(d_.size));
    else if (!err.empty())
      failure = Error::Io(impl_->where(what) + ": " + err);
    else if (d_.size >= 0 && got != static_cast<uint64_t>(d_.size))
      failure = Error::Corrupt(impl_->where(what) + ": " + std::to_string(got) + " bytes, the descriptor says " +
                               std::to_string(d_.size));
    std::string hex = h.hex();
    if (!failure && hex != d_.digest.encoded)
      failure = Error::Corrupt(impl_->where(what) + ": the bytes hash to " + d_.digest.algorithm + ":" + hex +
                               " (HTTP " + std::to_string(r.status) + ")");
    if (tmpFd >= 0) {
      // Not synced: an entry is re-hashed before every use, so a torn one is only a miss.
      bool keep = !failure;
      if (tmpPath.empty()) {
        std::string proc = "/proc/self/fd/" + std::to_string(tmpFd);
        if (keep)
          ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, cachePath_.c_str(), AT_SYMLINK_FOLLOW);  // EEXIST: already cached
        ::close(tmpFd);
      } else {
        ::close(tmpFd);
        if (!keep || ::rename(tmpPath.c_str(), cachePath_.c_str()) != 0) ::unlink(tmpPath.c_str());
      }
    }
    if (impl_->o.progress) std::fprintf(stderr, "\r\033[K");
    finish(failure, hex);
  }

  void progress(uint64_t got) {
    auto now = std::chrono::steady_clock::now();
    if (now - lastProgress_ < std::chrono::milliseconds(200)) return;
    lastProgress_ = now;
    std::fprintf(stderr, "\r\033[Kfetching %s: %s / %s", d_.digest.encoded.substr(0, 12).c_str(),
                 util::humanBytes(got).c_str(),
                 util::humanBytes(static_cast<uint64_t>(std::max<int64_t>(d_.size, 0))).c_str());
  }

  Client::Impl* impl_;
  oci::Descriptor d_;
  std::string cachePath_, tmpDir_;
  std::thread t_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> q_;
  std::string hex_;  // of every byte received, once done_
  size_t off_ = 0, queued_ = 0;
  bool done_ = false, cancel_ = false;
  std::optional<Error> err_;
  std::chrono::steady_clock::time_point lastProgress_{};
};

// Whether a cached blob still hashes to its digest (a torn or tampered entry does not).
bool cacheEntryValid(const std::string& path, const oci::Digest& d) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  util::Hasher h(d.algorithm);
  char buf[1 << 16];
  ssize_t k;
  while ((k = ::read(fd, buf, sizeof buf)) > 0) h.update(buf, static_cast<size_t>(k));
  ::close(fd);
  return k == 0 && h.hex() == d.encoded;
}

class FileStream : public oci::ByteStream {
 public:
  FileStream(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}
  ~FileStream() override { ::close(fd_); }
  Result<size_t> read(void* buf, size_t n) override {
    ssize_t k;
    do k = ::read(fd_, buf, n);
    while (k < 0 && errno == EINTR);
    if (k < 0) return Error::Io("reading " + what_ + ": " + std::strerror(errno));
    return static_cast<size_t>(k);
  }

 private:
  int fd_;
  std::string what_;
};

}  // namespace

Result<std::unique_ptr<oci::ByteStream>> Client::blob(const oci::Descriptor& d) {
  if (!d.digest.verifiable())
    return Error::Unsupported("blob " + d.digest.str() + " uses an algorithm Kernodeck cannot verify");
  KDK_TRY_ASSIGN(std::string cacheRoot, openCacheDir(impl_->o));
  std::string cachePath, tmpDir;
  if (!cacheRoot.empty()) {
    std::string dir = cacheRoot + "/blobs/" + d.digest.algorithm;
    cachePath = dir + "/" + d.digest.encoded;
    tmpDir = cacheRoot + "/tmp";
    util::makeDirs(dir);
    // Verified on read: an entry that no longer hashes to its digest is dropped and fetched again.
    if (cacheEntryValid(cachePath, d.digest)) {
      int fd = ::open(cachePath.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) return std::unique_ptr<oci::ByteStream>(new FileStream(fd, "cached blob " + d.digest.str()));
    }
    ::unlink(cachePath.c_str());
  }
  return std::unique_ptr<oci::ByteStream>(new BlobStream(impl_.get(), d, cachePath, tmpDir));
}

namespace {

class RegistrySource : public oci::ImageSource {
 public:
  RegistrySource(const Reference& ref, const ClientOptions& o) : client_(ref, o), cacheDir_(openCacheDir(o)) {}

  Result<oci::Descriptor> resolve() override {
    if (!cacheDir_.ok()) return cacheDir_.error();  // refused before anything is read from it
    const Reference& ref = client_.reference();
    std::string what = ref.digest ? ref.digest->str() : ref.tag;
    KDK_TRY_ASSIGN(Manifest m, client_.manifest(what));
    manifests_[m.digest.str()] = m.bytes;
    oci::Descriptor d;
    d.mediaType = m.mediaType.empty() ? oci::media::kOciManifest : m.mediaType;
    d.digest = m.digest;
    d.size = static_cast<int64_t>(m.bytes.size());
    return d;
  }

  Result<std::unique_ptr<oci::ByteStream>> openBlob(const oci::Descriptor& d) override {
    if (isManifestType(d.mediaType)) {
      auto it = manifests_.find(d.digest.str());
      if (it == manifests_.end()) {
        KDK_TRY_ASSIGN(Manifest m, client_.manifest(d.digest.str()));
        it = manifests_.emplace(d.digest.str(), m.bytes).first;
      }
      return std::unique_ptr<oci::ByteStream>(new oci::MemoryStream(it->second));
    }
    return client_.blob(d);
  }

  std::string where(const oci::Descriptor& d) const override {
    const Reference& r = client_.reference();
    return r.registry + "/" + r.repository + "@" + d.digest.str();
  }
  std::string tag() const override {
    return client_.reference().tagGiven || !client_.reference().digest ? client_.reference().tag : "";
  }
  std::string scanCacheDir() const override { return cacheDir_.ok() ? *cacheDir_ : std::string(); }

 private:
  Client client_;
  Result<std::string> cacheDir_;  // checked once more by each blob read
  std::map<std::string, std::string> manifests_;
};

}  // namespace

Result<std::unique_ptr<oci::ImageSource>> openRegistrySource(const Reference& ref, const ClientOptions& opts) {
  return std::unique_ptr<oci::ImageSource>(new RegistrySource(ref, opts));
}

}  // namespace kernodeck::registry
