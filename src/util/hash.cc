#include "kernodeck/util/hash.h"

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <string>

namespace kernodeck::util {

struct Hasher::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Hasher::Hasher(std::string_view algorithm) {
  const EVP_MD* md = EVP_get_digestbyname(std::string(algorithm).c_str());
  if (md == nullptr) return;
  ctx_ = new Ctx;
  ctx_->md = EVP_MD_CTX_new();
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, md, nullptr) != 1) {
    EVP_MD_CTX_free(ctx_->md);
    delete ctx_;
    ctx_ = nullptr;
  }
}

Hasher::~Hasher() {
  if (ctx_) {
    EVP_MD_CTX_free(ctx_->md);
    delete ctx_;
  }
}

Hasher::Hasher(Hasher&& o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }
Hasher& Hasher::operator=(Hasher&& o) noexcept {
  if (this != &o) {
    this->~Hasher();
    ctx_ = o.ctx_;
    o.ctx_ = nullptr;
  }
  return *this;
}

void Hasher::update(const void* data, size_t n) {
  if (ctx_ && n) EVP_DigestUpdate(ctx_->md, data, n);
}

std::string Hasher::raw() {
  if (!ctx_) return {};
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Hasher::hex() { return toHex(raw()); }

std::string sha256Hex(std::string_view data) {
  Hasher h("sha256");
  h.update(data);
  return h.hex();
}

std::string toHex(std::string_view raw) {
  static const char* digits = "0123456789abcdef";
  std::string s(raw.size() * 2, '\0');  // written in place: one per file hashed (issue 31)
  for (size_t i = 0; i < raw.size(); ++i) {
    auto c = static_cast<unsigned char>(raw[i]);
    s[2 * i] = digits[c >> 4];
    s[2 * i + 1] = digits[c & 15];
  }
  return s;
}

std::string base64Encode(std::string_view raw) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < raw.size(); i += 3) {
    uint32_t v = (uint8_t(raw[i]) << 16) | (uint8_t(raw[i + 1]) << 8) | uint8_t(raw[i + 2]);
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += a[v & 63];
  }
  if (i + 1 == raw.size()) {
    uint32_t v = uint8_t(raw[i]) << 16;
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == raw.size()) {
    uint32_t v = (uint8_t(raw[i]) << 16) | (uint8_t(raw[i + 1]) << 8);
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string base64UrlNoPad(std::string_view raw) {
  std::string s = base64Encode(raw);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return s;
}

int base64Sextet(char c) {
  static const auto table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 26; ++i) {
      t[static_cast<size_t>('A' + i)] = static_cast<int8_t>(i);
      t[static_cast<size_t>('a' + i)] = static_cast<int8_t>(26 + i);
    }
    for (int i = 0; i < 10; ++i) t[static_cast<size_t>('0' + i)] = static_cast<int8_t>(52 + i);
    t['+'] = t['-'] = 62;
    t['/'] = t['_'] = 63;
    t['='] = -2;
    return t;
  }();
  return table[static_cast<unsigned char>(c)];
}

bool base64Decode(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : in) {
    int v = base64Sextet(c);
    if (v == -2) {
      ++pad;
      continue;
    }
    if (v < 0 || pad) return false;  // not base64, or data after padding
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xff));
    }
  }
  if (pad > 2) return false;
  return bits < 6;  // a single dangling sextet is not valid base64
}

}  // namespace kernodeck::util
