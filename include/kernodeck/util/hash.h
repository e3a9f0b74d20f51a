// Streaming hashes (OpenSSL EVP) and the digest helpers built on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kernodeck::util {

// An incremental hash. Algorithm names are OpenSSL's: "sha256", "sha512", "md5".
// Not copyable; movable.
class Hasher {
 public:
  explicit Hasher(std::string_view algorithm = "sha256");
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  // False when OpenSSL does not know the algorithm; update/hex then do nothing.
  bool valid() const { return ctx_ != nullptr; }
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes the hash; the Hasher must not be updated afterwards.
  std::string hex();
  std::string raw();

 private:
  struct Ctx;
  Ctx* ctx_ = nullptr;
};

std::string sha256Hex(std::string_view data);
std::string toHex(std::string_view raw);
// RFC 4648 base64 (standard alphabet, padded) and the urlsafe unpadded form used by RECORD.
std::string base64Encode(std::string_view raw);
std::string base64UrlNoPad(std::string_view raw);
// The 6-bit value of a base64 character, either alphabet (standard and urlsafe); -1 for a
// character that is not base64, -2 for the padding '='.
int base64Sextet(char c);
// Decodes standard or urlsafe base64, padding optional; false on bad input.
bool base64Decode(std::string_view in, std::string& out);

}  // namespace kernodeck::util
