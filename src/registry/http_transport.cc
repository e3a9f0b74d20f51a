// See transport.h. The libcurl transport: an easy handle per exchange, taken from the transport's
// idle handles (reset: the options go, the open connections stay) so that a client's exchanges
// reuse one kept-alive connection instead of a TCP and TLS handshake each (a gate reading 400
// referrers made 800); the 2xx body handed to the request's sink as it arrives, other bodies
// kept up to a cap.
#include <dirent.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "kernodeck/registry/client.h"
#include "kernodeck/registry/curl_lib.h"
#include "kernodeck/registry/transport.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::registry {

void HttpTransport::sleepFor(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

std::string urlEscape(const std::string& s) {
  char* e = curl_easy_escape(nullptr, s.c_str(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

namespace {

// A CURLU handle, freed at scope end.
struct UrlHandle {
  CURLU* h = curl_url();
  ~UrlHandle() {
    if (h) curl_url_cleanup(h);
  }
  UrlHandle() = default;
  UrlHandle(const UrlHandle&) = delete;
  UrlHandle& operator=(const UrlHandle&) = delete;
  std::optional<std::string> get(CURLUPart part) const {
    char* out = nullptr;
    if (!h || curl_url_get(h, part, &out, 0) != CURLUE_OK || !out) return std::nullopt;
    std::string s = out;
    curl_free(out);
    return s;
  }
};

}  // namespace

Result<std::string> resolveUrl(const std::string& base, const std::string& ref) {
  UrlHandle u;
  if (!u.h || curl_url_set(u.h, CURLUPART_URL, base.c_str(), 0) != CURLUE_OK)
    return Error::Invalid("'" + util::printable(base, 200) + "' is not an absolute URL");
  // With a base set, libcurl resolves a relative reference against it (RFC 3986 5.2).
  if (curl_url_set(u.h, CURLUPART_URL, ref.c_str(), 0) != CURLUE_OK)
    return Error::Invalid("'" + util::printable(ref, 200) + "' is not a URL reference");
  auto out = u.get(CURLUPART_URL);
  if (!out) return Error::Invalid("'" + util::printable(ref, 200) + "' cannot be resolved against a URL");
  return *out;
}

Result<std::string> appendQuery(const std::string& url, const std::string& pair) {
  UrlHandle u;
  if (!u.h || curl_url_set(u.h, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    return Error::Invalid("'" + util::printable(url, 200) + "' is not an absolute URL");
  if (curl_url_set(u.h, CURLUPART_QUERY, pair.c_str(), CURLU_APPENDQUERY) != CURLUE_OK)
    return Error::Invalid("cannot add '" + util::printable(pair, 200) + "' to the query of a URL");
  auto out = u.get(CURLUPART_URL);
  if (!out) return Error::Invalid("'" + util::printable(url, 200) + "' is not an absolute URL");
  return *out;
}

std::string urlOrigin(const std::string& url) {
  UrlHandle u;
  if (!u.h || curl_url_set(u.h, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return {};
  auto scheme = u.get(CURLUPART_SCHEME), host = u.get(CURLUPART_HOST);
  if (!scheme || !host) return {};
  std::string out = *scheme + "://" + *host;
  if (auto port = u.get(CURLUPART_PORT)) out += ":" + *port;
  return out;
}

namespace {

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(const ClientOptions& o)
      : insecure_(o.insecure), connectTimeoutS_(o.connectTimeoutS), stallTimeoutS_(o.stallTimeoutS), options_(o) {
    curl_lib::api();  // libcurl loaded and initialised before the first exchange
    if (!o.certDir.empty()) {
      if (auto sys = util::readFileLimited("/etc/ssl/certs/ca-certificates.crt", 8u << 20); sys.ok()) caBlob_ = *sys;
      if (DIR* d = ::opendir(o.certDir.c_str())) {
        while (struct dirent* e = ::readdir(d)) {
          std::string n = e->d_name;
          if (n.size() > 4 && (n.substr(n.size() - 4) == ".crt" || n.substr(n.size() - 4) == ".pem"))
            if (auto t = util::readFileLimited(o.certDir + "/" + n, 1 << 20); t.ok()) caBlob_ += "\n" + *t;
        }
        ::closedir(d);
      }
    }
  }

  ~CurlTransport() override {
    for (CURL* c : idle_) curl_easy_cleanup(c);
  }

  HttpResponse perform(const HttpRequest& q) override {
    HttpResponse r;
    CURL* c = take();
    if (!c) {
      r.transportError = "cannot initialise libcurl";
      return r;
    }
    struct Ctx {
      HttpResponse* r;
      CURL* c;
      const std::function<bool(const char*, size_t)>* sink;
      size_t cap;
    } ctx{&r, c, &q.sink, q.errorCap};
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
    for (const auto& h : q.headers) hl = curl_slist_append(hl, h.c_str());
    std::string range;
    if (q.rangeFrom > 0) range = std::to_string(q.rangeFrom) + "-";
    curl_easy_setopt(c, CURLOPT_URL, q.url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &ctx);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connectTimeoutS_);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stallTimeoutS_);
    // The overall deadline bounds the whole exchange, however slowly bytes keep coming (the stall
    // limit alone lets 1 byte/s run for hours).
    std::optional<int64_t> left = timeLeftMs(options_);
    if (left) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(*left, 1)));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "kernodeck/0.1");
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "identity");
    if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
    if (!q.body.empty() || q.method == "POST" || q.method == "PUT") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, q.body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(q.body.size()));
    }
    if (q.method == "PUT") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    if (q.method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (!caBlob_.empty()) {
      struct curl_blob blob {};
      blob.data = caBlob_.data();
      blob.len = caBlob_.size();
      blob.flags = CURL_BLOB_COPY;
      curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (insecure_) {
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && r.aborted)) r.transportError = curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT && left && timeLeftMs(options_) == 0) r.pastDeadline = true;
    curl_slist_free_all(hl);
    give(c);
    return r;
  }

 private:
  // An idle handle, reset, or a new one. Each handle serves one exchange at a time; the blob
  // readers' threads each get their own.
  CURL* take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* c = idle_.back();
        idle_.pop_back();
        curl_easy_reset(c);
        return c;
      }
    }
    return curl_easy_init();
  }
  void give(CURL* c) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(c);
  }

  bool insecure_;
  long connectTimeoutS_, stallTimeoutS_;
  ClientOptions options_;  // its deadline
  std::string caBlob_;
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

}  // namespace

std::unique_ptr<HttpTransport> makeCurlTransport(const ClientOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace kernodeck::registry
