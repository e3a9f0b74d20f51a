#include "kernodeck/util/hash.h"

#include <gtest/gtest.h>

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
