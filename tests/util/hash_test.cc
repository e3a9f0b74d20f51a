#include "kernodeck/util/hash.h"
#include "kernodeck/util/keyed_hash.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace util_hash_test {

using namespace kernodeck::util;

TEST(Hash, Sha256KnownVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Hash, IncrementalEqualsOneShot) {
  Hasher h("sha256");
  h.update("a");
  h.update("bc");
  EXPECT_EQ(h.hex(), sha256Hex("abc"));
}

TEST(Hash, UnknownAlgorithmIsInvalid) {
  Hasher h("nope");
  EXPECT_FALSE(h.valid());
  EXPECT_EQ(h.hex(), "");
}

TEST(Base64, RoundTripsAndRecordForm) {
  struct Case {
    std::string raw, std, url;
  } cases[] = {
      {"", "", ""}, {"f", "Zg==", "Zg"}, {"fo", "Zm8=", "Zm8"}, {"foo", "Zm9v", "Zm9v"}, {"\xfb\xff", "+/8=", "-_8"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(base64Encode(c.raw), c.std);
    EXPECT_EQ(base64UrlNoPad(c.raw), c.url);
    std::string back;
    ASSERT_TRUE(base64Decode(c.std, back));
    EXPECT_EQ(back, c.raw);
    ASSERT_TRUE(base64Decode(c.url, back));
    EXPECT_EQ(back, c.raw);
  }
  std::string out;
  EXPECT_FALSE(base64Decode("Zm9v!", out));
  EXPECT_FALSE(base64Decode("Zg==Zg", out));
}

// SipHash-2-4 as its paper gives it: key 00..0f, message 00..0e (15 bytes).
TEST(KeyedHash, SipHashMatchesThePapersVector) {
  unsigned char key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<unsigned char>(i);
  std::string msg;
  for (int i = 0; i < 15; ++i) msg.push_back(static_cast<char>(i));
  EXPECT_EQ(kernodeck::util::sipHash24(key, msg), 0xa129ca6149be45e5ull);
}

// SipHash-1-3, the tables' variant, against CPython's bytes hash (siphash13, sys.hash_info) with
// PYTHONHASHSEED=0, i.e. a zero key: `PYTHONHASHSEED=0 python3 -c 'print(hex(hash(b"abc") % 2**64))'`.
// Lengths around the word boundary exercise the tail.
TEST(KeyedHash, SipHash13MatchesCPythonsUnderAZeroKey) {
  const unsigned char zero[16] = {};
  auto first = [](int n) {
    std::string m;
    for (int i = 0; i < n; ++i) m.push_back(static_cast<char>(i));
    return m;
  };
  using kernodeck::util::sipHash13;
  EXPECT_EQ(sipHash13(zero, "abc"), 0xc03bc3a0042630f2ull);
  EXPECT_EQ(sipHash13(zero, first(7)), 0x2f098ab0c751325aull);
  EXPECT_EQ(sipHash13(zero, first(8)), 0xead411e67ebe2eeaull);
  EXPECT_EQ(sipHash13(zero, first(15)), 0xf30eb725bb91c9eaull);
  EXPECT_EQ(sipHash13(zero, first(16)), 0x8972188433a5c5b7ull);
  EXPECT_EQ(sipHash13(zero, first(63)), 0x385d3e39e5f37359ull);
  EXPECT_EQ(sipHash13(zero, "usr/lib/python3/dist-packages"), 0x3ba6996fa63593b1ull);
}

// The attack on the tables an image fills (the view's path index, the layer walk's duplicate
// check, RECORD's listed paths): names chosen so that the unkeyed std::hash these tables used
// gives them all the same low 16 bits, i.e. one slot of a 65,536-slot table, so each insertion
// walks past all the others. Under the process's keyed hash the same names spread as any
// names do (a table of 65,536 slots holding 200 names: no slot with more than a few).
TEST(KeyedHash, NamesChosenToCollideUnderStdHashSpreadUnderTheKeyedHash) {
  constexpr uint64_t kMask = 0xffff;
  const uint64_t target = std::hash<std::string_view>{}("site-packages/x") & kMask;
  std::vector<std::string> names;
  for (uint64_t i = 0; names.size() < 200; ++i) {
    std::string n = "site-packages/f" + std::to_string(i);
    if ((std::hash<std::string_view>{}(n)&kMask) == target) names.push_back(n);
  }
  std::map<uint64_t, int> stdSlots, keyedSlots;
  for (const auto& n : names) {
    ++stdSlots[std::hash<std::string_view>{}(n)&kMask];
    ++keyedSlots[kernodeck::util::keyedHash(n) & kMask];
  }
  EXPECT_EQ(stdSlots.size(), 1u);  // the attack's input is real: one slot under std::hash
  int worst = 0;
  for (const auto& [slot, count] : keyedSlots) worst = std::max(worst, count);
  EXPECT_LE(worst, 4);
  EXPECT_GE(keyedSlots.size(), 190u);
  // And the tables' hasher is the keyed one (a transparent functor for unordered sets).
  EXPECT_EQ(kernodeck::util::KeyedHash{}(names[0]), kernodeck::util::keyedHash(names[0]));
}

}  // namespace util_hash_test
