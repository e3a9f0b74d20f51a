// The nesting bound every reader of someone else's JSON applies before parsing (issue 25 §6):
// nlohmann copies, compares and dumps by recursion, so brackets alone could overflow the stack.
#include <gtest/gtest.h>

#include <string>

#include "kernodeck/util/json_read.h"

namespace util_json_nesting_test {

using kernodeck::util::checkJsonNesting;
using kernodeck::util::kMaxJsonDepth;
using kernodeck::util::parseJsonText;

TEST(JsonNesting, DepthIsCountedOutsideStringsOnly) {
  struct Case {
    std::string text;
    bool ok;
  };
  const std::string at = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  const std::string past = "[" + at + "]";
  const Case cases[] = {
      {"{}", true},
      {at, true},
      {past, false},
      {std::string(3000, '{'), false},                                   // truncated and deep
      {R"({"s": ")" + std::string(5000, '[') + R"("})", true},           // brackets in a string
      {R"({"s": "\")" + std::string(5000, '{') + R"("})", true},         // after an escaped quote
      {std::string(5000, ']') + std::string(kMaxJsonDepth, '['), true},  // stray closers do not go negative
      {std::string(5000, ']') + std::string(kMaxJsonDepth + 1, '['), false},
  };
  for (const auto& c : cases) {
    auto r = checkJsonNesting(c.text, "doc.json");
    EXPECT_EQ(r.ok(), c.ok) << c.text.substr(0, 40);
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("doc.json nests arrays and objects more than 256 deep"), std::string::npos)
          << r.error().message;
    }
  }
}

// parseJsonText applies it: 100000 brackets are an error, not a tree to crash on later.
TEST(JsonNesting, ParseJsonTextRefusesDeepDocuments) {
  auto deep = parseJsonText(std::string(100000, '[') + std::string(100000, ']'), "r.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("r.json nests arrays and objects more than 256 deep"), std::string::npos);
  auto fine = parseJsonText(R"({"a": [[1, 2], {"b": null}]})", "r.json");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  nlohmann::json copy = *fine;  // copying is what recursed
  EXPECT_EQ(copy["a"][0][1], 2);
}

}  // namespace util_json_nesting_test
