// libtorch::forEachPickleString: the string keys of a torch.save pickle, found by scanning.
#include "kernodeck/libtorch/pickle_strings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kernodeck/record/tensor_file.h"

namespace libtorch_pickle_strings_test {

using namespace std::string_literals;

namespace {

std::set<std::string> strings(std::string_view pickle) {
  std::set<std::string> out;
  kernodeck::libtorch::forEachPickleString(pickle, [&](std::string_view s) { out.emplace(s); });
  return out;
}

}  // namespace

// Both encodings; a length that runs past the end or over 256 bytes is no string.
TEST(PickleStrings, BothEncodingsAndNoReadPastTheEnd) {
  EXPECT_EQ(strings("\x8c\x05model"s + "X\x09\0\0\0optimizer"s), (std::set<std::string>{"model", "optimizer"}));
  EXPECT_EQ(strings("\x8c\x09model"s), std::set<std::string>{});
  EXPECT_EQ(strings("X\x01\x01\0\0"s + std::string(257, 'a')), std::set<std::string>{});
  EXPECT_EQ(strings("X\x05\0\0"s), std::set<std::string>{});  // the length itself cut short
  EXPECT_EQ(strings(""), std::set<std::string>{});
}

// A real checkpoint's data.pkl (tests/fixtures/pt, written by torch.save) holds its keys.
TEST(PickleStrings, ACheckpointsKeysAreFound) {
  std::ifstream in(std::string(SOURCE_DIR) + "/tests/fixtures/pt/checkpoint.pt", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto pickle = kernodeck::record::torchZipPickle(bytes.str());
  ASSERT_TRUE(pickle.ok()) << pickle.error().message;
  auto keys = strings(*pickle);
  for (const char* k : {"model", "optimizer", "losses", "weight", "bias", "momentum_buffer"})
    EXPECT_TRUE(keys.count(k)) << k;
}

}  // namespace libtorch_pickle_strings_test
