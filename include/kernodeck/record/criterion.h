// The acceptance criteria, declared before any comparison. Per sample (a row of the first
// dimension): exact, abs<=X (max absolute error), rel<=X (max relative error), cosine>=X
// (cosine similarity of the row). Over the sample: topk:K>=X (mean overlap of each row's K
// largest entries) and knn:K>=X (mean overlap of each row's K nearest neighbours among the
// other rows, by cosine similarity: the ranking an embeddings search depends on).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct Criterion {
  std::string kind;  // exact | abs | rel | cosine | topk | knn
  // The threshold exactly as the user wrote it ("0.99995", "1.2351e-6") and its value parsed
  // from that text: the text is what is printed and recorded, the value what is compared,
  // never a rounded form of either.
  std::string thresholdText;
  double threshold = 0;
  int k = 0;  // topk, knn
  // The criterion as declared, its number as written: "cosine>=0.99995", "knn:5>=0.95".
  std::string str() const;
  // The significant digits of the threshold as written ("0.99995": 5), so that a measured value
  // is printed with at least as many.
  int digits() const;
  // cosine, topk and knn measure agreement (higher is better); the others an error.
  bool higherIsBetter() const { return kind == "cosine" || kind == "topk" || kind == "knn"; }
  // What the measure is called in messages: "max abs error", "min cosine", "mean kNN overlap".
  std::string measureName() const;
};

// Parses a criterion. Error::Invalid (a usage error) for an unknown metric, a malformed number
// and a criterion no output could meet or that means nothing: a negative tolerance, a cosine
// above 1, an overlap above 1, K of 0.
Result<Criterion> parseCriterion(std::string_view s);

// A number printed so that it means something beside a tolerance: %.3g ("3.2e-07", "0.998").
std::string formatMeasure(double v);
// `v` printed beside `threshold` with as many digits as it takes for the printed value to fall
// on the same side of the threshold as `v` does (0.99992 against 0.99995 is "0.99992", not
// "1"), and at least `minDigits` (at least three).
std::string formatAgainst(double v, double threshold, int minDigits = 3);

struct SampleValue {
  std::string id;
  double value = 0;  // the criterion's per-sample measure (error, cosine or overlap)
};

struct Comparison {
  bool pass = false;
  double measure = 0;               // compared with the threshold: max error, min cosine, mean overlap
  int64_t samples = 0, beyond = 0;  // samples, and samples on the wrong side of the threshold
  std::vector<SampleValue> worst;   // up to 10, worst first (for a failure: only samples beyond the threshold)
  std::string summary;              // "abs<=1e-06: max abs error 3.2e-05 > 1e-06 (2 of 32 samples beyond)"
};

// Compares row by row: row i of `expected` and of `actual` are the same sample, ids[i] (the
// caller aligns them by id). Shapes must be equal.
Comparison compare(const Criterion& c, const Tensor& expected, const Tensor& actual,
                   const std::vector<std::string>& ids);

}  // namespace kernodeck::record
