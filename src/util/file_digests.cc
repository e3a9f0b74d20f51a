// See file_digests.h.
#include "kernodeck/util/file_digests.h"

#include <openssl/evp.h>

#include <algorithm>

#include "kernodeck/util/hash.h"

namespace kernodeck::util {

struct FileDigests::Impl {
  static constexpr const char* kNames[3] = {"SHA256", "MD5", "SHA1"};
  EVP_MD* md[3] = {nullptr, nullptr, nullptr};
  EVP_MD_CTX* ctx[3] = {nullptr, nullptr, nullptr};
};

FileDigests::FileDigests() : impl_(new Impl) {
  for (int i = 0; i < 3; ++i) {
    impl_->md[i] = EVP_MD_fetch(nullptr, Impl::kNames[i], nullptr);
    impl_->ctx[i] = EVP_MD_CTX_new();
  }
}

FileDigests::~FileDigests() {
  for (int i = 0; i < 3; ++i) {
    EVP_MD_CTX_free(impl_->ctx[i]);
    EVP_MD_free(impl_->md[i]);
  }
  delete impl_;
}

void FileDigests::start(unsigned which) {
  active_ = 0;
  for (int i = 0; i < 3; ++i)
    if ((which & (1u << i)) && impl_->md[i] && impl_->ctx[i] &&
        EVP_DigestInit_ex(impl_->ctx[i], impl_->md[i], nullptr) == 1)
      active_ |= 1u << i;
}

void FileDigests::update(const void* data, size_t n) {
  if (n == 0) return;
  for (int i = 0; i < 3; ++i)
    if (active_ & (1u << i)) EVP_DigestUpdate(impl_->ctx[i], data, n);
}

void FileDigests::finish(std::string& sha256, std::string& md5, std::string& sha1) {
  std::string* out[3] = {&sha256, &md5, &sha1};
  for (int i = 0; i < 3; ++i) {
    if (!(active_ & (1u << i))) continue;
    unsigned char raw[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(impl_->ctx[i], raw, &len);
    *out[i] = toHex(std::string_view(reinterpret_cast<const char*>(raw), len));
  }
  active_ = 0;
}

unsigned FileDigests::finishRaw(unsigned char (&sha256)[32], unsigned char (&md5)[16], std::string& sha1) {
  unsigned done = 0;
  for (int i = 0; i < 3; ++i) {
    if (!(active_ & (1u << i))) continue;
    unsigned char raw[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(impl_->ctx[i], raw, &len);
    if (i == 0 && len == 32) {
      std::copy(raw, raw + 32, sha256);
    } else if (i == 1 && len == 16) {
      std::copy(raw, raw + 16, md5);
    } else if (i == 2) {
      sha1 = toHex(std::string_view(reinterpret_cast<const char*>(raw), len));
    } else {
      continue;
    }
    done |= 1u << i;
  }
  active_ = 0;
  return done;
}

}  // namespace kernodeck::util
