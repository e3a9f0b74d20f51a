// A hash for the tables a hostile image fills (the view's path index, the layer walk's
// duplicate check, the RECORD paths listed): SipHash-1-3 under a key drawn at random once per
// process (the variant CPython and Rust key their hash tables with; 2-4's margin is for a
// MAC, and 1-3 costs 5 rounds for a short name against 8). std::hash<std::string> is
// libstdc++'s unkeyed MurmurHash, so whoever builds the image could choose names that share
// the low bits a power-of-two table indexes by and turn each insertion into a walk over all the
// others (quadratic). Written here, not taken from a library: none of the project's Debian
// libraries offers a fast keyed hash for short strings (OpenSSL's SipHash goes through EVP_MAC,
// a context per call).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kernodeck::util {

// SipHash-2-4 of `data` under `key` (16 bytes: k0 then k1, little-endian).
uint64_t sipHash24(const unsigned char key[16], std::string_view data);
// SipHash-1-3, the same with one compression round and three finalisation rounds.
uint64_t sipHash13(const unsigned char key[16], std::string_view data);

// sipHash13 under this process's random key.
uint64_t keyedHash(std::string_view data);

// For unordered containers of strings.
struct KeyedHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return keyedHash(s); }
  size_t operator()(const std::string& s) const { return keyedHash(s); }
};

}  // namespace kernodeck::util
