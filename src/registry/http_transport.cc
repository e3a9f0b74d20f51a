// See transport.h. The libcurl transport: one easy handle per exchange, the 2xx body handed to
// the request's sink as it arrives, other bodies kept up to a cap.
#include <dirent.h>

#include <chrono>
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

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(const ClientOptions& o)
      : insecure_(o.insecure), connectTimeoutS_(o.connectTimeoutS), stallTimeoutS_(o.stallTimeoutS) {
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

  HttpResponse perform(const HttpRequest& q) override {
    HttpResponse r;
    CURL* c = curl_easy_init();
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
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    return r;
  }

 private:
  bool insecure_;
  long connectTimeoutS_, stallTimeoutS_;
  std::string caBlob_;
};

}  // namespace

std::unique_ptr<HttpTransport> makeCurlTransport(const ClientOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace kernodeck::registry
