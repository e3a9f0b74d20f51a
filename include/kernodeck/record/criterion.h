// The acceptance criterion, declared before any comparison: exact,
// abs<=X (max absolute error), rel<=X (max relative error), cosine>=X (per
// sample), or topk:K>=X (mean overlap of each sample's K largest entries).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct Criterion {
  std::string kind;       // exact | abs | rel | cosine | topk
  double threshold = 0;
  int k = 0;              // topk
  std::string str() const;
};

Result<Criterion> parseCriterion(std::string_view s);

struct SampleError {
  std::string id;
  double error = 0;  // the criterion's measure for this sample (for cosine and topk: 1 - value)
};

struct Comparison {
  bool pass = false;
  double measure = 0;                  // worst error, or the mean overlap for topk
  std::vector<SampleError> worst;      // up to 10, worst first
  std::string summary;
};

// Compares row by row: the first dimension indexes samples (ids[i] names row i).
Comparison compare(const Criterion& c, const Tensor& expected, const Tensor& actual, const std::vector<std::string>& ids);

}  // namespace kernodeck::record
