#include <gtest/gtest.h>

#include <cmath>

#include "kernodeck/record/criterion.h"
#include "kernodeck/record/tensor_file.h"

using namespace kernodeck::record;

TEST(TensorFile, NpyRoundTripAndDtypes) {
  Tensor t{"", "float32", {2, 3}, {1, 2, 3, 4, 5, 6}};
  auto back = parseNpy(writeNpy(t));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->dtype, "float32");
  EXPECT_EQ(back->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back->values, t.values);
  // Hand-written headers: Fortran order, float16, big-endian int16, bool.
  auto npy = [](const std::string& descr, bool fortran, const std::string& shape, const std::string& data) {
    std::string h =
        "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (" + shape + "), }";
    while ((10 + h.size() + 1) % 64) h.push_back(' ');
    h.push_back('\n');
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
    return out + h + data;
  };
  std::string f64;
  for (double v : {1.0, 3.0, 2.0, 4.0})
    f64.append(reinterpret_cast<const char*>(&v), 8);  // column-major of [[1,2],[3,4]]
  auto f = parseNpy(npy("<f8", true, "2, 2", f64));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->values, (std::vector<double>{1, 2, 3, 4}));
  auto h = parseNpy(npy("<f2", false, "2,", std::string("\x00\x3c\x00\xc0", 4)));  // 1.0, -2.0
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->values, (std::vector<double>{1.0, -2.0}));
  auto be = parseNpy(npy(">i2", false, "1,", std::string("\xff\xfe", 2)));
  ASSERT_TRUE(be.ok());
  EXPECT_EQ(be->values[0], -2);
  EXPECT_EQ(parseNpy(npy("|b1", false, "2,", std::string("\x01\x00", 2)))->values, (std::vector<double>{1, 0}));
  for (const std::string& bad : {std::string("garbage"), npy("<f8", false, "4,", "short"),
                                 npy("<c16", false, "1,", std::string(16, 0)), npy("<f8", false, "99999999999,", "")})
    EXPECT_FALSE(parseNpy(bad).ok());
}

TEST(TensorFile, Safetensors) {
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"x":"y"}})";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  float v[2] = {1.5f, -2.5f};
  file += header + std::string(reinterpret_cast<const char*>(v), 8);
  auto t = parseSafetensors(file);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ((*t)[0].values, (std::vector<double>{1.5, -2.5}));
  EXPECT_FALSE(parseSafetensors(file.substr(0, file.size() - 1)).ok());
  EXPECT_FALSE(parseSafetensors(std::string(8, '\xff')).ok());
}

TEST(TensorFile, Ids) {
  EXPECT_EQ(*parseIds("a\nb\n\nc\n", "ids.txt"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(*parseIds("id,label\n7,x\n8,y\n", "ids.csv"), (std::vector<std::string>{"7", "8"}));
  EXPECT_EQ(*parseIds(R"(["q", 3])", "ids.json"), (std::vector<std::string>{"q", "3"}));
  EXPECT_FALSE(parseIds("{}", "ids.json").ok());
}

TEST(Criterion, ParseAndCompare) {
  EXPECT_EQ(parseCriterion("abs<=1e-5")->kind, "abs");
  EXPECT_EQ(parseCriterion("topk:5>=0.8")->k, 5);
  for (const char* bad : {"abs>=1", "cosine<=0.9", "nonsense", "topk:0>=1", "abs<=-1"})
    EXPECT_FALSE(parseCriterion(bad).ok()) << bad;
  Tensor e{"", "float64", {2, 3}, {1, 2, 3, 4, 5, 6}};
  Tensor a = e;
  a.values[4] += 0.01;
  auto abs = compare(*parseCriterion("abs<=1e-3"), e, a, {"s0", "s1"});
  EXPECT_FALSE(abs.pass);
  ASSERT_FALSE(abs.worst.empty());
  EXPECT_EQ(abs.worst[0].id, "s1");
  EXPECT_NEAR(abs.worst[0].value, 0.01, 1e-12);
  EXPECT_EQ(abs.beyond, 1);
  EXPECT_EQ(abs.summary, "abs<=0.001: max abs error 0.01 > 0.001 over 2 sample(s), 1 beyond");
  EXPECT_TRUE(compare(*parseCriterion("abs<=0.1"), e, a, {}).pass);
  EXPECT_FALSE(compare(*parseCriterion("exact"), e, a, {}).pass);
  EXPECT_TRUE(compare(*parseCriterion("cosine>=0.9999"), e, a, {}).pass);
  Tensor scores{"", "float64", {1, 4}, {0.9, 0.8, 0.1, 0.0}};
  Tensor swapped{"", "float64", {1, 4}, {0.8, 0.9, 0.0, 0.1}};  // same top-2 set, other order
  EXPECT_TRUE(compare(*parseCriterion("topk:2>=1"), scores, swapped, {}).pass);
  Tensor moved{"", "float64", {1, 4}, {0.9, 0.0, 0.8, 0.1}};
  EXPECT_FALSE(compare(*parseCriterion("topk:2>=1"), scores, moved, {}).pass);
  // A pass names the measured value against the threshold, in digits that mean something there.
  auto met = compare(*parseCriterion("abs<=1e-6"), e, e, {"s0", "s1"});
  EXPECT_TRUE(met.pass);
  EXPECT_EQ(met.summary, "abs<=1e-06: max abs error 0 <= 1e-06 over 2 sample(s)");
  EXPECT_TRUE(met.worst.size() == 2 && met.worst[0].value == 0);
}

TEST(Criterion, NearestNeighboursPreserved) {
  EXPECT_EQ(parseCriterion("knn:3>=0.9")->kind, "knn");
  EXPECT_FALSE(parseCriterion("knn:3>=1.5").ok());
  // Five points on two clusters; the actual run moves p4 into the other cluster.
  Tensor e{"", "float32", {5, 2}, {1, 0, 0.9, 0.1, 0.8, 0.2, 0, 1, 0.1, 0.9}};
  Tensor a = e;
  EXPECT_TRUE(compare(*parseCriterion("knn:1>=1"), e, a, {"p0", "p1", "p2", "p3", "p4"}).pass);
  // A small perturbation keeps every neighbourhood (an abs criterion would fail on it).
  for (auto& v : a.values) v += 1e-4;
  EXPECT_TRUE(compare(*parseCriterion("knn:1>=1"), e, a, {}).pass);
  EXPECT_FALSE(compare(*parseCriterion("abs<=1e-6"), e, a, {}).pass);
  a = e;
  a.values[8] = 0.95, a.values[9] = 0.05;  // p4 now sits next to p0 and p1
  auto moved = compare(*parseCriterion("knn:1>=0.9"), e, a, {"p0", "p1", "p2", "p3", "p4"});
  EXPECT_FALSE(moved.pass);
  ASSERT_FALSE(moved.worst.empty());
  EXPECT_LT(moved.measure, 0.9);
  bool named = false;
  for (const auto& w : moved.worst) named |= w.id == "p4" || w.id == "p3";
  EXPECT_TRUE(named);
  EXPECT_NE(moved.summary.find("mean 1-NN overlap"), std::string::npos) << moved.summary;
}
