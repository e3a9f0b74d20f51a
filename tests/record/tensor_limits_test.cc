// What reading tensor files may cost: the budget one command shares between its documents, and
// the safetensors header's bounds (issue 25, section 6). The .pt reader's limits are tested with
// its fixtures in pt_zip_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "kernodeck/record/tensor_file.h"

namespace record_tensor_limits_test {

using namespace kernodeck::record;

namespace {

std::string npyOf(size_t n) {
  Tensor t;
  t.dtype = "float64";
  t.shape = {static_cast<int64_t>(n)};
  t.values.assign(n, 1.5);
  return writeNpy(t);
}

// A safetensors file of one F32 tensor of two elements, under the given header.
std::string safetensorsWith(const std::string& header) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + std::string(8, '\0');
}

}  // namespace

TEST(TensorBudget, OneBudgetBoundsEveryDocumentOfACommand) {
  TensorBudget budget(100);
  auto a = parseNpy(npyOf(64), &budget);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(budget.left(), 36u);
  auto b = parseNpy(npyOf(64), &budget);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            ".npy would hold 64 elements where 36 are left of the 100 one command may read "
            "(each kept as a double)");
  auto c = parseSafetensors(safetensorsWith(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"), &budget);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(budget.left(), 34u);
  // Without a budget each document has a fresh one of the command's size.
  EXPECT_TRUE(parseNpy(npyOf(64)).ok());
  EXPECT_EQ(TensorBudget().left(), 1ull << 28);
}

// A header of deep brackets or of many small values would grow a JSON tree many times its size;
// both are refused as they arrive, and a real header still reads.
TEST(TensorBudget, SafetensorsHeaderIsBoundedInDepthAndValues) {
  std::string deep = R"({"__metadata__":)" + std::string(64, '[') + std::string(64, ']') + "}";
  std::string many = R"({"__metadata__":[)";
  for (int i = 0; i < (1 << 20); ++i) many += "0,";
  many += "0]}";
  for (const auto& header : {deep, many}) {
    auto r = parseSafetensors(safetensorsWith(header));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("safetensors header holds more than 1048576 JSON values or nests deeper than 8"),
              std::string::npos)
        << r.error().message;
  }
  auto ok = parseSafetensors(
      safetensorsWith(R"({"__metadata__":{"format":"pt"},"t":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}})"));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->at(0).shape, (std::vector<int64_t>{1, 2}));
}

}  // namespace record_tensor_limits_test
