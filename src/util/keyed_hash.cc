// See keyed_hash.h. SipHash as Aumasson and Bernstein specify it, with the number of
// compression and finalisation rounds as parameters: 2-4 (the paper's, whose vector the test
// checks) and 1-3 (the tables' hash, as CPython's and Rust's hash tables use it; the test checks
// CPython's values under a zero key).
#include "kernodeck/util/keyed_hash.h"

#include <endian.h>
#include <sys/random.h>

#include <chrono>
#include <cstring>

namespace kernodeck::util {

namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return le64toh(v);
}

struct State {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
  }
  template <int C>
  void absorb(uint64_t m) {
    v3 ^= m;
    for (int i = 0; i < C; ++i) round();
    v0 ^= m;
  }
};

struct ProcessKey {
  unsigned char bytes[16];
  ProcessKey() {
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
      // No entropy source (a very old kernel, a seccomp filter): the clock and an address,
      // still not something an image chosen in advance can know.
      uint64_t a = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      uint64_t b = reinterpret_cast<uintptr_t>(this) ^ 0x9E3779B97F4A7C15ull;
      std::memcpy(bytes, &a, 8);
      std::memcpy(bytes + 8, &b, 8);
    }
  }
};

// SipHash-C-D.
template <int C, int D>
uint64_t sipHash(const unsigned char key[16], std::string_view data) {
  const uint64_t k0 = load64(key), k1 = load64(key + 8);
  State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
          k1 ^ 0x7465646279746573ull};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size(), whole = n & ~size_t(7);
  for (size_t i = 0; i < whole; i += 8) s.absorb<C>(load64(p + i));
  uint64_t tail = 0;
  if (n > whole) std::memcpy(&tail, p + whole, n - whole);  // (an empty view may have no data pointer)
  s.absorb<C>(le64toh(tail) | static_cast<uint64_t>(n) << 56);
  s.v2 ^= 0xff;
  for (int i = 0; i < D; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace

uint64_t sipHash24(const unsigned char key[16], std::string_view data) { return sipHash<2, 4>(key, data); }

uint64_t sipHash13(const unsigned char key[16], std::string_view data) { return sipHash<1, 3>(key, data); }

uint64_t keyedHash(std::string_view data) {
  static const ProcessKey key;
  return sipHash13(key.bytes, data);
}

}  // namespace kernodeck::util
