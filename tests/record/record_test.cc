#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>

#include "kernodeck/record/criterion.h"
#include "kernodeck/record/tensor_file.h"

namespace record_record_test {

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

// The .npy header's hand scanner agrees with the three regexes it replaced (issue 39 section
// 12) on hand-picked and random headers, and reads a 1 MB one (the regexes recursed once per
// character: a 120 KB header was a segmentation fault).
TEST(TensorFile, NpyHeaderScannerAgreesWithTheRegexesAndReadsLongHeaders) {
  const std::regex descrRe(R"('descr'\s*:\s*'([<>|=])([fiub])(\d+)')");
  const std::regex fortranRe(R"('fortran_order'\s*:\s*(True|False))");
  const std::regex shapeRe(R"('shape'\s*:\s*\(([^)]*)\))");
  auto agree = [&](const std::string& h) {
    NpyHeader got = scanNpyHeader(h);
    std::smatch m;
    bool d = std::regex_search(h, m, descrRe);
    EXPECT_EQ(got.descr.has_value(), d) << h;
    if (d && got.descr) {
      EXPECT_EQ(got.descr->order, m[1].str()[0]) << h;
      EXPECT_EQ(got.descr->kind, m[2].str()[0]) << h;
      EXPECT_EQ(got.descr->size, m[3].str()) << h;
    }
    bool f = std::regex_search(h, m, fortranRe);
    EXPECT_EQ(got.fortran.has_value(), f) << h;
    if (f && got.fortran) {
      EXPECT_EQ(*got.fortran, m[1].str() == "True") << h;
    }
    bool sh = std::regex_search(h, m, shapeRe);
    EXPECT_EQ(got.shape.has_value(), sh) << h;
    if (sh && got.shape) {
      EXPECT_EQ(*got.shape, m[1].str()) << h;
    }
  };
  for (const std::string& h :
       {std::string("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"), std::string("'descr':'|b1'"),
        std::string("'descr' :\t'>i'  'descr': '=u16'"), std::string("'descr': '<c16', 'descr': '<f4'"),
        std::string("'shape': (1, 'shape': (2,)"), std::string("'shape' : ("), std::string("'fortran_order':Tru"),
        std::string("'fortran_order':\n True"), std::string("'descr'"), std::string("")})
    agree(h);
  std::mt19937 rng(39);
  const std::vector<std::string> parts = {"'descr'", "'fortran_order'", "'shape'", ":", " ", "\n", "'", "<", ">",
                                          "|", "=", "f", "i", "u", "b", "c", "8", "16", "True", "False", "(", ")",
                                          ",", "2", "x", "{", "}"};
  for (int i = 0; i < 20000; ++i) {
    std::string h;
    for (int n = rng() % 16; n > 0; --n) h += parts[rng() % parts.size()];
    agree(h);
  }
  std::string longHeader = "{'descr': '<f4', 'fortran_order': True, 'shape': (3," + std::string(1 << 20, ' ') + "), }";
  NpyHeader got = scanNpyHeader(longHeader);
  ASSERT_TRUE(got.shape && got.fortran && got.descr);
  EXPECT_EQ(got.shape->size(), (1u << 20) + 2);
  EXPECT_TRUE(*got.fortran);
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
  EXPECT_EQ(abs.summary, "abs<=1e-3: max abs error 0.01 > 1e-3 over 2 sample(s), 1 beyond");
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
  EXPECT_EQ(met.summary, "abs<=1e-6: max abs error 0 <= 1e-6 over 2 sample(s)");
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

// Criteria are checked as written: the threshold is the number the user typed, printed as typed
// and compared as parsed, at and around each boundary, many digits included.
TEST(Criterion, CheckedAsWrittenAtEachBoundary) {
  // Rows whose cosine with (1, 0) is c.
  auto atCosine = [](double c) { return Tensor{"", "float64", {1, 2}, {c, std::sqrt(1 - c * c)}}; };
  Tensor unit{"", "float64", {1, 2}, {1, 0}};
  Tensor zero{"", "float64", {1, 1}, {0}};
  auto off = [](double d) { return Tensor{"", "float64", {1, 1}, {d}}; };
  // Bit-identical outputs with values whose sums round.
  Tensor many{"", "float32", {2, 5}, {0.1, 0.7, 1e-3, 3.3, -2.9, 1e-7, 0.333333, 7.77, -0.01, 12345.678}};
  Tensor one{"", "float64", {1, 1}, {1}};
  // Two rows with top-2 overlaps 1 and 0.5: mean 0.75.
  Tensor topE{"", "float64", {2, 4}, {4, 3, 2, 1, 4, 3, 2, 1}};
  Tensor topA{"", "float64", {2, 4}, {4, 3, 2, 1, 4, 1, 3, 2}};
  struct Case {
    const char* criterion;
    Tensor expected, actual;
    bool pass;
  } cases[] = {
      {"cosine>=0.9994", unit, atCosine(0.9992), false},
      {"cosine>=0.9993", unit, atCosine(0.9992), false},
      {"cosine>=0.9991", unit, atCosine(0.9992), true},
      {"cosine>=0.99920001", unit, atCosine(0.9992), false},
      {"cosine>=0.99919999", unit, atCosine(0.9992), true},
      {"abs<=1.2351e-6", zero, off(1.2368e-6), false},
      {"abs<=1.2367e-6", zero, off(1.2368e-6), false},
      {"abs<=1.2368e-6", zero, off(1.2368e-6), true},  // at the boundary: met
      {"abs<=1.2369e-6", zero, off(1.2368e-6), true},
      {"abs<=0.0000012368", zero, off(1.2368e-6), true},
      {"abs<=1.23679999e-6", zero, off(1.2368e-6), false},
      {"rel<=1.2e-6", one, off(1 + 1.25e-6), false},
      {"rel<=1.3e-6", one, off(1 + 1.25e-6), true},
      {"cosine>=0.9999", many, many, true},
      {"cosine>=0.99995", many, many, true},
      {"cosine>=0.99999", many, many, true},
      {"cosine>=0.999999999999", many, many, true},
      {"cosine>=1", many, many, true},
      {"cosine>=1.0", unit, atCosine(0.9999999), false},
      {"exact", many, many, true},
      {"topk:2>=0.75", topE, topA, true},
      {"topk:2>=0.7500001", topE, topA, false},
      {"topk:2>=0.74999", topE, topA, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.criterion);
    auto parsed = parseCriterion(c.criterion);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->str(), c.criterion);  // as written, never rounded
    Comparison cmp = compare(*parsed, c.expected, c.actual, {});
    EXPECT_EQ(cmp.pass, c.pass) << cmp.summary;
    EXPECT_EQ(cmp.summary.rfind(std::string(c.criterion) + ": ", 0), 0u) << cmp.summary;
  }
  // The measured value is printed with the threshold's digits, on its side of it.
  Comparison near = compare(*parseCriterion("cosine>=0.9994"), unit, atCosine(0.9992), {});
  EXPECT_NE(near.summary.find("min cosine 0.9992 < 0.9994"), std::string::npos) << near.summary;
  Comparison close = compare(*parseCriterion("cosine>=0.99995"), unit, atCosine(0.99994), {});
  EXPECT_NE(close.summary.find("min cosine 0.99994 < 0.99995"), std::string::npos) << close.summary;
  Comparison err = compare(*parseCriterion("abs<=1.2351e-6"), zero, off(1.2368e-6), {});
  EXPECT_NE(err.summary.find("max abs error 1.2368e-06 > 1.2351e-6"), std::string::npos) << err.summary;
  // Spaces around the operator are allowed; the number keeps its spelling.
  EXPECT_EQ(parseCriterion(" cosine >= 0.99995 ")->str(), "cosine>=0.99995");
  EXPECT_EQ(parseCriterion("abs<=1.2351e-6")->threshold, 1.2351e-6);
}

// A criterion no output could meet, or that means nothing, is an error when it is declared.
TEST(Criterion, ImpossibleCriteriaAreRefused) {
  for (const char* bad : {"cosine>=1.5", "cosine>=1.0000001",
                          "abs<=-1e-6",  "rel<=-0.1",
                          "abs<=-0",     "knn:0>=0.9",
                          "topk:0>=1",   "knn:5>=1.01",
                          "bogus<=1",    "mse<=0.1",
                          "cosine>=abc", "abs<=1.2.3",
                          "abs<=0x1p-3", "abs<=inf",
                          "abs<=nan",    "abs<=1e999",
                          "abs<=",       "cosine>=-0.5",
                          "abs>=1",      "cosine<=0.9",
                          "knn:5<=0.9",  ""}) {
    auto c = parseCriterion(bad);
    EXPECT_FALSE(c.ok()) << "'" << bad << "' parsed as " << (c.ok() ? c->str() : "");
    if (!c.ok()) {
      EXPECT_TRUE(c.error().is(kernodeck::ErrorKind::Invalid)) << bad;
    }
  }
  EXPECT_NE(parseCriterion("bogus<=1").error().message.find("unknown metric 'bogus'"), std::string::npos);
  EXPECT_NE(parseCriterion("abs<=-1e-6").error().message.find("a tolerance cannot be negative"), std::string::npos);
  EXPECT_NE(parseCriterion("cosine>=1.5").error().message.find("a cosine is at most 1"), std::string::npos);
  EXPECT_NE(parseCriterion("knn:0>=0.9").error().message.find("K must be 1 or more"), std::string::npos);
}

}  // namespace record_record_test
